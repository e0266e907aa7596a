import type { Overview } from '../../../../../policy-schemas/types.gen.ts';
import { Badge } from '../../../components/badge.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { href } from '../../../lib/router.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { useOverview } from '../api/get-overview.ts';
import { usePendingRequests } from '../../review/api/get-publish-requests.ts';
import { askedByMe, requester } from '../../review/components/review-page.tsx';

/** The page after sign-in: what needs attention, each item linked to where it is dealt with. */
export function HomePage({ session }: { session: Session }) {
  const overview = useOverview();
  return (
    <section className="page">
      <PageHeader title="Home" subtitle={`Signed in as ${session.label} (${session.role}). What needs attention now:`} />
      {overview.isPending ? <Loading what="overview" /> : null}
      {overview.error ? <Notice error={overview.error} /> : null}
      {overview.data ? <ReviewQueue tenants={overview.data.tenants.map((t) => t.id)} session={session} /> : null}
      {overview.data ? <Attention overview={overview.data} /> : null}
    </section>
  );
}

function Attention({ overview }: { overview: Overview }) {
  const a = overview.attention;
  const byId = new Map(overview.tenants.map((t) => [t.id, t]));
  const nothing = !a.unpublished.length && !a.quarantined.total && !a.failedSyncs.length && !a.runtimes.length;
  return (
    <div className="attention">
      {nothing ? (
        <p className="notice notice-success">Nothing needs attention: every draft is published, no tool waits for review, every sync and runtime is fine.</p>
      ) : null}
      <section className="card" aria-labelledby="home-drafts">
        <h2 id="home-drafts">Unpublished drafts ({a.unpublished.length})</h2>
        {a.unpublished.length ? (
          <ul>
            {a.unpublished.map((id) => {
              const t = byId.get(id);
              return (
                <li key={id}>
                  <a href={href(`/tenants/${id}/publish`)}>{t?.name ?? id}</a>{' '}
                  {t?.draft.compileError ? (
                    <Badge tone="bad">does not compile</Badge>
                  ) : t?.published ? (
                    <span className="muted">
                      differs from v{t.published.version} in {t.draft.changes.join(', ')}
                    </span>
                  ) : (
                    <span className="muted">never published</span>
                  )}
                </li>
              );
            })}
          </ul>
        ) : (
          <p className="muted">Every tenant's draft is published.</p>
        )}
      </section>
      <section className="card" aria-labelledby="home-review">
        <h2 id="home-review">Quarantined tools waiting for review ({a.quarantined.total})</h2>
        {a.quarantined.total ? (
          <>
            <ul>
              {a.quarantined.tools.map((t) => (
                <li key={t.id}>
                  <a className="mono" href={href(`/tools/${encodeURIComponent(t.id)}`)}>
                    {t.id}
                  </a>{' '}
                  <span className="muted">
                    {t.changed ? 'definition changed' : 'new'}
                    {t.server ? ` · from ${t.server}` : ''}
                  </span>
                </li>
              ))}
            </ul>
            <a href={href('/mcp')}>Open the review queue</a>
          </>
        ) : (
          <p className="muted">No tool waits for review.</p>
        )}
      </section>
      <section className="card" aria-labelledby="home-syncs">
        <h2 id="home-syncs">Failed MCP syncs ({a.failedSyncs.length})</h2>
        {a.failedSyncs.length ? (
          <ul>
            {a.failedSyncs.map((s) => (
              <li key={s.server}>
                <a href={href('/mcp')}>{s.label}</a> <span className="muted mono">{s.server}</span> — {s.error}{' '}
                <span className="muted">({new Date(s.at).toLocaleString()})</span>
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">Every MCP server synced fine last time.</p>
        )}
      </section>
      <section className="card" aria-labelledby="home-runtimes">
        <h2 id="home-runtimes">Runtimes on old versions or unhealthy ({a.runtimes.length})</h2>
        {a.runtimes.length ? (
          <ul>
            {a.runtimes.map((r) => (
              <li key={`${r.tenant}/${r.runtimeId}`}>
                <span className="mono">{r.runtimeId}</span> in <a href={href(`/tenants/${r.tenant}/publish`)}>{byId.get(r.tenant)?.name ?? r.tenant}</a>:{' '}
                {r.version != null ? `v${r.version}` : 'no version'}
                {r.behind ? `, ${r.behind} behind` : ''} <Badge tone={r.health === 'fresh' ? 'ok' : r.health === 'stale' ? 'warn' : 'bad'}>{r.health}</Badge>
                {r.lastError ? <code> {r.lastError}</code> : null}
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">Every runtime that reported runs its tenant's latest version and is fresh.</p>
        )}
      </section>
    </div>
  );
}

/** Publishes waiting for a second person, across the tenants this session reads. */
function ReviewQueue({ tenants, session }: { tenants: string[]; session: Session }) {
  const queries = usePendingRequests(tenants);
  const pending = queries.flatMap((q) => q.data ?? []);
  const failed = queries.find((q) => q.error)?.error;
  return (
    <section className="card" aria-labelledby="home-publish-requests">
      <h2 id="home-publish-requests">Publish requests waiting for review ({pending.length})</h2>
      {failed ? <Notice error={failed} /> : null}
      {pending.length ? (
        <ul>
          {pending.map((r) => (
            <li key={r.id}>
              <a href={href(`/tenants/${r.tenant}/reviews/${r.id}`)}>
                {r.tenant}: {r.rollbackTo ? `roll back to v${r.rollbackTo}` : 'publish the draft'}
              </a>{' '}
              <span className="muted">
                asked by {requester(r)} · {r.reason}
              </span>{' '}
              {r.stale ? <Badge tone="bad">stale</Badge> : null}
              {askedByMe(session, r) ? <Badge tone="muted">yours: another person reviews it</Badge> : null}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">No publish waits for review.</p>
      )}
    </section>
  );
}
