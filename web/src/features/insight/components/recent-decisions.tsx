import type { StoredDecision } from '../../../../../policy-schemas/types.gen.ts';
import { Badge, type BadgeTone } from '../../../components/badge.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { href } from '../../../lib/router.ts';

const tone: Record<StoredDecision['decision'], BadgeTone> = { allow: 'ok', require_approval: 'warn', deny: 'bad' };

/** The newest logged decisions, newest first; `null` when the role may not read them. */
export function RecentDecisions({ tenant, items, label, show }: { tenant: string; items: StoredDecision[] | null; label: string; show: 'tool' | 'subject' }) {
  if (items === null) return <p className="muted small">Your role cannot read this tenant's decision logs.</p>;
  if (!items.length) return <p className="muted small">No decision logged yet (runtimes log decisions as they decide calls).</p>;
  return (
    <div className="table-wrap">
      <DataTable label={label} columns={['When', show === 'tool' ? 'Tool' : 'Subject', 'Decision', 'Why']} compact>
        {items.map((d) => (
          <tr key={d.id}>
            <td className="small">{new Date(d.at).toLocaleString()}</td>
            <td className="mono small">
              {show === 'tool' ? (
                <a href={href(`/tools/${encodeURIComponent(d.tool)}`)}>{d.tool}</a>
              ) : (
                <a href={href(`/agents/${encodeURIComponent(d.subject)}`)}>{d.subject}</a>
              )}
            </td>
            <td>
              <Badge tone={tone[d.decision]}>{d.decision}</Badge>
              {d.errorCode ? <span className="muted small"> {d.errorCode}</span> : null}
            </td>
            <td className="small">{d.reason ?? ''}</td>
          </tr>
        ))}
      </DataTable>
      <p className="small">
        <a href={href(`/tenants/${tenant}/decisions`)}>All decisions of {tenant}</a>
      </p>
    </div>
  );
}
