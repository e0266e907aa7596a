import type { BundleDiff, PolicyDecision } from '../../../../../policy-schemas/types.gen.ts';
import { Badge, type BadgeTone } from '../../../components/badge.tsx';
import { DataTable } from '../../../components/data-table.tsx';

const tone: Record<PolicyDecision, BadgeTone> = { allow: 'ok', require_approval: 'warn', deny: 'bad' };

function Ids({ ids, kind }: { ids: string[]; kind: 'added' | 'removed' | 'changed' }) {
  if (!ids.length) return <span className="muted">—</span>;
  return (
    <span className="chips">
      {ids.map((id) => (
        <span key={id} className={`chip mono chip-${kind}`}>
          {kind === 'added' ? '+ ' : kind === 'removed' ? '− ' : '~ '}
          {id}
        </span>
      ))}
    </span>
  );
}

/** A bundle diff: catalog changes, tools gained or lost per role, and every subject/tool decision that changed. */
export function BundleDiffView({ diff, label }: { diff: BundleDiff; label: string }) {
  const fromName = diff.from.version === 'draft' ? 'the draft' : `v${diff.from.version}`;
  const toName = diff.to.version === 'draft' ? 'the draft' : `v${diff.to.version}`;
  if (diff.identical)
    return (
      <p className="notice notice-info" role="note" aria-label={label}>
        {toName === 'the draft' ? 'The draft' : toName} has the same content as {fromName}: publishing it would not create a new version.
      </p>
    );
  const { catalog } = diff;
  const catalogChanged = catalog.added.length + catalog.removed.length + catalog.changed.length > 0;
  const transitions = new Map<string, { from: PolicyDecision; to: PolicyDecision; count: number }>();
  for (const d of diff.decisions) {
    const key = `${d.from} ${d.to}`;
    const t = transitions.get(key) ?? { from: d.from, to: d.to, count: 0 };
    t.count++;
    transitions.set(key, t);
  }
  return (
    <fieldset className="bundle-diff plain" aria-label={label}>
      <p className="diff-headline">
        Catalog: {catalog.added.length} added, {catalog.removed.length} removed, {catalog.changed.length} changed · {diff.roles.length} role(s) reach other
        tools · {diff.decisions.length} decision(s) change.
      </p>
      {diff.roles.length ? (
        <DataTable label={`${label}: summary by role`} columns={['Role', 'Gains', 'Loses']} compact>
          {diff.roles.map((r) => (
            <tr key={r.role}>
              <td>
                {r.role} {r.status !== 'changed' ? <Badge tone={r.status === 'added' ? 'ok' : 'bad'}>{r.status}</Badge> : null}
              </td>
              <td>{r.added.length} tool(s)</td>
              <td>{r.removed.length} tool(s)</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      {transitions.size ? (
        <DataTable label={`${label}: summary by decision`} columns={['Decision', 'Subject/tool pairs']} compact>
          {[...transitions.values()].map((t) => (
            <tr key={`${t.from} ${t.to}`}>
              <td>
                <Badge tone={tone[t.from]}>{t.from}</Badge> → <Badge tone={tone[t.to]}>{t.to}</Badge>
              </td>
              <td>{t.count}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      <details className="diff-details">
        <summary>Details: every tool and decision</summary>
        <h4>Catalog</h4>
        {catalogChanged ? (
          <p>
            <Ids ids={catalog.added} kind="added" /> <Ids ids={catalog.removed} kind="removed" /> <Ids ids={catalog.changed} kind="changed" />
          </p>
        ) : (
          <p className="muted">No tool entry changed.</p>
        )}
        <h4>Tools each role can reach</h4>
        {diff.roles.length ? (
          <div className="table-wrap">
            <DataTable label={`${label}: roles`} columns={['Role', 'Gains', 'Loses']} compact>
              {diff.roles.map((r) => (
                <tr key={r.role}>
                  <td>
                    {r.role} {r.status !== 'changed' ? <Badge tone={r.status === 'added' ? 'ok' : 'bad'}>{r.status}</Badge> : null}
                  </td>
                  <td>
                    <Ids ids={r.added} kind="added" />
                  </td>
                  <td>
                    <Ids ids={r.removed} kind="removed" />
                  </td>
                </tr>
              ))}
            </DataTable>
          </div>
        ) : (
          <p className="muted">No role gains or loses a tool.</p>
        )}
        <h4>Decisions that change</h4>
        {diff.decisions.length ? (
          <div className="table-wrap">
            <DataTable label={`${label}: decisions`} columns={['Subject', 'Tool', fromName, toName]} compact>
              {diff.decisions.map((d) => (
                <tr key={`${d.subject} ${d.tool}`}>
                  <td className="mono">{d.subject}</td>
                  <td className="mono">{d.tool}</td>
                  <td>
                    <Badge tone={tone[d.from]}>{d.from}</Badge>
                  </td>
                  <td>
                    <Badge tone={tone[d.to]}>{d.to}</Badge>
                  </td>
                </tr>
              ))}
            </DataTable>
          </div>
        ) : (
          <p className="muted">No subject's decision on any tool changes.</p>
        )}
      </details>
    </fieldset>
  );
}
