import { useId } from 'react';
import type { ToolUsage } from '../../../../../policy-schemas/types.gen.ts';
import { Badge, type BadgeTone } from '../../../components/badge.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading } from '../../../components/page.tsx';
import { href } from '../../../lib/router.ts';
import { useToolUsage } from '../api/get-tool-usage.ts';
import { RecentDecisions } from './recent-decisions.tsx';

type Outcome = ToolUsage['tenants'][number]['roles'][number]['outcome'];

const words: Record<Outcome, [string, BadgeTone]> = {
  allow: ['allows it', 'ok'],
  require_approval: ['allows it with a person’s approval', 'warn'],
  denied: ['denies it', 'bad'],
  not_allowed: ['does not allow it', 'muted'],
  group: ['allows it, but none of its groups', 'muted'],
};

const excludedWords: Record<string, string> = {
  quarantined: 'It is quarantined: no role can reach it until an admin approves it.',
  disabled: 'It is disabled: no role can reach it.',
  no_redaction: 'It has no redaction allowlist, so it enters no bundle.',
  missing: 'The draft of this tenant does not compile, or the tool is removed: nothing to show.',
};

/** Which tenants' roles allow, deny or constrain this tool (on each draft), who reaches it, its recent decisions. */
export function ToolUsagePanel({ id }: { id: string }) {
  const usage = useToolUsage(id);
  const ids = useId();
  return (
    <section className="card tool-usage" aria-labelledby={`${ids}-h`}>
      <h2 id={`${ids}-h`}>Where this tool is allowed</h2>
      {usage.isPending ? <Loading what="where the tool is allowed" /> : null}
      {usage.error ? <Notice error={usage.error} /> : null}
      {usage.data && !usage.data.tenants.length ? <p className="muted">You cannot read the policy of any tenant.</p> : null}
      {usage.data?.tenants.map((t) => (
        <section key={t.tenant} aria-label={`In ${t.name}`}>
          <h3>
            <a href={href(`/tenants/${t.tenant}`)}>{t.name}</a> <span className="muted mono small">{t.tenant}</span>
          </h3>
          {t.excluded ? <p className="notice notice-warn">{excludedWords[t.excluded]}</p> : null}
          {t.roles.length ? (
            <div className="table-wrap">
              <DataTable label={`Roles of ${t.tenant} and ${id}`} columns={['Role', 'Policy', 'Argument constraints']} compact>
                {t.roles.map((r) => (
                  <tr key={r.role}>
                    <td>{r.role}</td>
                    <td>
                      <Badge tone={words[r.outcome][1]}>{words[r.outcome][0]}</Badge>
                    </td>
                    <td className="small">
                      {r.constraints.length
                        ? r.constraints.map((k) => `${k.reason} (otherwise ${k.otherwise === 'deny' ? 'denied' : 'needs approval'})`).join('; ')
                        : '—'}
                    </td>
                  </tr>
                ))}
              </DataTable>
            </div>
          ) : !t.excluded ? (
            <p className="muted small">This tenant has no role.</p>
          ) : null}
          <p className="small">
            {t.subjects.length ? (
              <>
                Reached by{' '}
                {t.subjects.map((s, i) => (
                  <span key={s}>
                    {i ? ', ' : ''}
                    <a className="mono" href={href(`/agents/${encodeURIComponent(s)}`)}>
                      {s}
                    </a>
                  </span>
                ))}{' '}
                (through their roles, when they ask for its groups).
              </>
            ) : (
              <span className="muted">No bound subject reaches it.</span>
            )}
          </p>
          <h4>Recent decisions</h4>
          <RecentDecisions tenant={t.tenant} items={t.recentDecisions} label={`Recent decisions on ${id} in ${t.tenant}`} show="subject" />
        </section>
      ))}
    </section>
  );
}
