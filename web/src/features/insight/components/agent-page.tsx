import { useId, useState } from 'react';
import { Badge } from '../../../components/badge.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { href, navigate } from '../../../lib/router.ts';
import { simulatorHref } from '../../decisions/components/decisions-page.tsx';
import { useOverview } from '../../overview/api/get-overview.ts';
import { useSubject } from '../api/get-subject.ts';
import { RecentDecisions } from './recent-decisions.tsx';

/** Every subject bound in a tenant the caller reads, each linking to its page; and a lookup by name. */
export function AgentsPage() {
  const overview = useOverview();
  const [typed, setTyped] = useState('');
  const ids = useId();
  const bySubject = new Map<string, string[]>();
  for (const t of overview.data?.tenants ?? []) for (const s of t.subjects) bySubject.set(s, [...(bySubject.get(s) ?? []), t.id]);
  return (
    <section className="page">
      <PageHeader
        title="Agents"
        subtitle="What can this agent do? Each subject's roles per tenant, what it sees now, and what it was recently allowed or denied."
      />
      <form
        className="row-inline"
        aria-label="Look up an agent"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed.trim()) navigate(`/agents/${encodeURIComponent(typed.trim())}`);
        }}
      >
        <div className="field">
          <label htmlFor={`${ids}-s`}>Subject</label>
          <input id={`${ids}-s`} value={typed} placeholder="agent:support-bot" onChange={(e) => setTyped(e.target.value)} />
        </div>
        <button type="submit">Show</button>
      </form>
      {overview.isPending ? <Loading what="agents" /> : null}
      {overview.error ? <Notice error={overview.error} /> : null}
      {bySubject.size ? (
        <div className="table-wrap">
          <DataTable label="Agents" columns={['Subject', 'Bound in']}>
            {[...bySubject].map(([s, tenants]) => (
              <tr key={s}>
                <td className="mono">
                  <a href={href(`/agents/${encodeURIComponent(s)}`)}>{s}</a>
                </td>
                <td>{tenants.join(', ')}</td>
              </tr>
            ))}
          </DataTable>
        </div>
      ) : overview.data ? (
        <p className="muted">No subject is bound to a role in a tenant you can read.</p>
      ) : null}
    </section>
  );
}

/** One agent (subject): its roles per tenant, what it would see on each draft (simulated), its recent decisions. */
export function AgentPage({ subject }: { subject: string }) {
  const view = useSubject(subject);
  return (
    <section className="page">
      <PageHeader
        title={
          <>
            Agent <span className="mono">{subject}</span>
          </>
        }
        subtitle="What this agent can do in each tenant: its roles, the tools it would see now on the draft when it asks for its roles' groups, and its latest decisions."
        actions={<a href={href('/agents')}>All agents</a>}
      />
      {view.isPending ? <Loading what="agent" /> : null}
      {view.error ? <Notice error={view.error} /> : null}
      {view.data && !view.data.tenants.length ? (
        <p className="muted">{subject} is bound to no role in a tenant you can read, and has no logged decision there.</p>
      ) : null}
      {view.data?.tenants.map((t) => (
        <section key={t.tenant} className="card" aria-label={`In ${t.name}`}>
          <h2>
            <a href={href(`/tenants/${t.tenant}`)}>{t.name}</a> <span className="muted mono small">{t.tenant}</span>
          </h2>
          <p>
            Roles:{' '}
            {t.roles.length ? (
              t.roles.map((r) => (
                <Badge key={r} tone="info">
                  {r}
                </Badge>
              ))
            ) : (
              <em>none</em>
            )}{' '}
            · Groups simulated: {t.groups.join(', ')} · <a href={simulatorHref(t.tenant, { subject, groups: t.groups })}>Open in the simulator</a>
          </p>
          {t.sees === null ? (
            <p className="notice notice-warn">The draft of {t.tenant} does not compile, so there is nothing to simulate.</p>
          ) : t.sees.rejected ? (
            <p className="notice notice-error">
              Its request is rejected ({t.sees.rejected.reason}): {t.sees.rejected.groups.join(', ')}.
            </p>
          ) : (
            <div className="two-col">
              <div className="table-wrap">
                <DataTable
                  label={`Tools ${subject} sees in ${t.tenant}`}
                  columns={['Tool', 'Decision']}
                  compact
                  caption={`Sees ${t.sees.tools.length} tool(s)`}
                >
                  {t.sees.tools.map((x) => (
                    <tr key={x.id}>
                      <td className="mono small">
                        <a href={href(`/tools/${encodeURIComponent(x.id)}`)}>{x.id}</a>
                      </td>
                      <td>
                        <Badge tone={x.decision === 'allow' ? 'ok' : 'warn'}>{x.decision}</Badge>
                        {x.constraints?.length ? (
                          <span className="muted small"> · arguments checked: {x.constraints.map((k) => k.reason).join('; ')}</span>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </DataTable>
              </div>
              <div className="table-wrap">
                <DataTable
                  label={`Tools hidden from ${subject} in ${t.tenant}`}
                  columns={['Tool', 'Why hidden']}
                  compact
                  caption={`${t.sees.filtered.length} tool(s) hidden`}
                >
                  {t.sees.filtered.map((x) => (
                    <tr key={x.id}>
                      <td className="mono small">
                        <a href={href(`/tools/${encodeURIComponent(x.id)}`)}>{x.id}</a>
                      </td>
                      <td>
                        <Badge tone="muted">{x.reason}</Badge>
                      </td>
                    </tr>
                  ))}
                </DataTable>
              </div>
            </div>
          )}
          <h3>Recent decisions</h3>
          <RecentDecisions tenant={t.tenant} items={t.recentDecisions} label={`Recent decisions of ${subject} in ${t.tenant}`} show="tool" />
        </section>
      ))}
    </section>
  );
}
