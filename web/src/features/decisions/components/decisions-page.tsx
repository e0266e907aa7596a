import { useId, useState } from 'react';
import type { DecisionBucket, DecisionSummary, DeniedKey, EvaluationRequest, StoredDecision } from '../../../../../policy-schemas/types.gen.ts';
import { Badge } from '../../../components/badge.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading } from '../../../components/page.tsx';
import { SelectField } from '../../../components/select-field.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { href } from '../../../lib/router.ts';
import { useUrlFilters } from '../../../lib/use-url-filters.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { download } from '../../bundles/api/download.ts';
import { decisionExportPath, type DecisionFilters, useDecisionSummary, useDecisions } from '../api/get-decisions.ts';
import { may } from '../../../lib/permissions.ts';

const keys = ['subject', 'tool', 'decision', 'errorCode', 'runtimeId', 'from', 'to'] as const;
const decisionTone = { allow: 'ok', deny: 'bad', require_approval: 'warn' } as const;

/** The evaluation request a logged call was decided under: what the simulator replays. */
export function requestOfDecision(d: Pick<StoredDecision, 'subject' | 'groups' | 'state' | 'profile' | 'facts'>): EvaluationRequest {
  const r: EvaluationRequest = { subject: d.subject, groups: d.groups, state: d.state };
  if (d.profile !== undefined) r.profile = d.profile;
  if (d.facts !== undefined) r.facts = d.facts;
  return r;
}

/** The simulator of a tenant, prefilled with a request. */
export function simulatorHref(tenant: string, request: EvaluationRequest): string {
  return href(`/tenants/${encodeURIComponent(tenant)}?request=${encodeURIComponent(JSON.stringify(request))}`);
}

/** What the tenant's runtimes decided: filters, a histogram by decision, the most denied tools and subjects, every record. */
export function DecisionsPage({ tenant, session }: { tenant: string; session: Session }) {
  const { filters, setFilter } = useUrlFilters<DecisionFilters>(`/tenants/${tenant}/decisions`, keys);
  const apiFilters: DecisionFilters = {
    ...filters,
    from: filters.from ? new Date(filters.from).toISOString() : undefined,
    to: filters.to ? new Date(filters.to).toISOString() : undefined,
  };
  const summary = useDecisionSummary(tenant, apiFilters);
  const list = useDecisions(tenant, apiFilters);
  const records = list.data?.pages.flatMap((p) => p.items) ?? [];
  const canExport = may(session, 'decision', 'export', tenant);
  const [exportError, setExportError] = useState<unknown>(null);
  const ids = useId();
  return (
    <div className="decisions">
      <p className="muted">
        What this tenant's runtimes decided, call by call (never the arguments or outputs). The time filters default to the last 24 hours for the chart.
      </p>
      <search className="filters" aria-label="Filter decisions">
        <FilterInput label="Subject" initial={filters.subject} onChange={(v) => setFilter('subject', v)} />
        <FilterInput label="Tool" initial={filters.tool} onChange={(v) => setFilter('tool', v)} />
        <SelectField
          empty="Any"
          label="Decision"
          value={filters.decision}
          options={['allow', 'deny', 'require_approval']}
          onChange={(v) => setFilter('decision', v)}
        />
        <FilterInput label="Error code" initial={filters.errorCode} onChange={(v) => setFilter('errorCode', v)} />
        <FilterInput label="Runtime" initial={filters.runtimeId} onChange={(v) => setFilter('runtimeId', v)} />
        <TextField label="From" type="datetime-local" value={filters.from ?? ''} onChange={(v) => setFilter('from', v)} />
        <TextField label="To" type="datetime-local" value={filters.to ?? ''} onChange={(v) => setFilter('to', v)} />
      </search>
      {summary.error ? <Notice error={summary.error} /> : null}
      {summary.data ? <SummaryView tenant={tenant} s={summary.data} /> : summary.isPending ? <Loading what="summary" /> : null}

      <section aria-labelledby={`${ids}-rec`}>
        <div className="card-header">
          <h2 id={`${ids}-rec`}>Records</h2>
          {canExport ? (
            <div className="button-row">
              <button
                type="button"
                onClick={() => download(decisionExportPath(tenant, apiFilters, 'csv'), `toolgate-decisions-${tenant}.csv`).catch(setExportError)}
              >
                Export CSV
              </button>
              <button
                type="button"
                onClick={() => download(decisionExportPath(tenant, apiFilters, 'jsonl'), `toolgate-decisions-${tenant}.jsonl`).catch(setExportError)}
              >
                Export JSONL
              </button>
            </div>
          ) : null}
        </div>
        {exportError ? <Notice error={exportError} /> : null}
        {list.error ? <Notice error={list.error} /> : null}
        {list.isPending ? <Loading what="decisions" /> : null}
        {list.data && !records.length ? <p className="muted">No decision matches these filters. Runtimes send records as they decide calls.</p> : null}
        {records.length ? (
          <div className="table-wrap">
            <DataTable label="Decision records" columns={['When', 'Subject', 'Tool', 'Decision', 'Why', 'Bundle', 'Runtime']} compact>
              {records.map((d) => (
                <tr key={d.id}>
                  <td>
                    <time dateTime={d.at}>{new Date(d.at).toLocaleString()}</time>
                  </td>
                  <td className="mono">{d.subject}</td>
                  <td className="mono">{d.tool}</td>
                  <td>
                    <Badge tone={decisionTone[d.decision]}>{d.decision}</Badge>
                  </td>
                  <td>
                    {d.errorCode ? <code>{d.errorCode}</code> : null} {d.reason ? <span className="muted">({d.reason})</span> : null}
                    {d.decision === 'deny' ? (
                      <>
                        {' '}
                        <a href={simulatorHref(tenant, requestOfDecision(d))}>
                          Open in simulator<span className="sr-only"> the request of call {d.toolCallId}</span>
                        </a>
                      </>
                    ) : null}
                  </td>
                  <td>{d.bundleVersion !== null ? `v${d.bundleVersion}` : '—'}</td>
                  <td className="mono small">{d.runtimeId}</td>
                </tr>
              ))}
            </DataTable>
          </div>
        ) : null}
        {list.hasNextPage ? (
          <button type="button" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
            {list.isFetchingNextPage ? 'Loading…' : 'Load older records'}
          </button>
        ) : null}
      </section>
    </div>
  );
}

/** A filter typed into freely: uncontrolled, so the URL update does not fight the caret. */
function FilterInput({ label, initial, onChange }: { label: string; initial: string | undefined; onChange: (value: string) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} defaultValue={initial ?? ''} onChange={(e) => onChange(e.target.value.trim())} />
    </div>
  );
}

function SummaryView({ tenant, s }: { tenant: string; s: DecisionSummary }) {
  const ids = useId();
  const total = s.buckets.reduce((n, b) => n + b.allow + b.deny + b.require_approval, 0);
  return (
    <>
      <section aria-labelledby={`${ids}-hist`} className="card">
        <h2 id={`${ids}-hist`}>Decisions over time</h2>
        <p className="muted small">
          {new Date(s.from).toLocaleString()} – {new Date(s.to).toLocaleString()} · {total} call(s) · {s.counters.stored} record(s) kept
          {s.counters.evicted ? ` · ${s.counters.evicted} evicted by the per-tenant cap` : ''}
          {s.counters.expired ? ` · ${s.counters.expired} past retention` : ''}
          {s.runtimes.some((r) => r.dropped > 0)
            ? ` · runtimes dropped ${s.runtimes.reduce((n, r) => n + r.dropped, 0)} record(s) while the server was out of reach`
            : ''}
        </p>
        {total ? <Histogram buckets={s.buckets} bucketSeconds={s.bucketSeconds} /> : <p className="muted">No decision in this window.</p>}
      </section>
      <div className="two-col">
        <TopDenied tenant={tenant} title="Most denied tools" rows={s.topDeniedTools} filterKey="tool" />
        <TopDenied tenant={tenant} title="Most denied subjects" rows={s.topDeniedSubjects} filterKey="subject" />
      </div>
    </>
  );
}

const colors = { allow: 'var(--ok, #2e7d32)', require_approval: 'var(--warn, #b26a00)', deny: 'var(--bad, #c62828)' } as const;

function Histogram({ buckets, bucketSeconds }: { buckets: DecisionBucket[]; bucketSeconds: number }) {
  const max = Math.max(1, ...buckets.map((b) => b.allow + b.deny + b.require_approval));
  const w = 12;
  const h = 120;
  return (
    <figure className="histogram">
      <svg
        role="img"
        aria-label="Decisions over time: allow, require_approval and deny per interval"
        width="100%"
        height={h}
        preserveAspectRatio="none"
        viewBox={`0 0 ${buckets.length * w} ${h}`}
      >
        {buckets.map((b, i) => {
          let y = h;
          return (
            <g key={b.start}>
              <title>{`${new Date(b.start).toLocaleString()} (+${bucketSeconds}s): ${b.allow} allow, ${b.require_approval} require_approval, ${b.deny} deny`}</title>
              {(['allow', 'require_approval', 'deny'] as const).map((k) => {
                const bar = (b[k] / max) * (h - 4);
                y -= bar;
                return bar > 0 ? <rect key={k} x={i * w + 1} y={y} width={w - 2} height={bar} fill={colors[k]} /> : null;
              })}
            </g>
          );
        })}
      </svg>
      <figcaption className="small">
        <span style={{ color: colors.allow }}>■</span> allow <span style={{ color: colors.require_approval }}>■</span> require_approval{' '}
        <span style={{ color: colors.deny }}>■</span> deny · {buckets.reduce((n, b) => n + b.allow, 0)} allow,{' '}
        {buckets.reduce((n, b) => n + b.require_approval, 0)} require_approval, {buckets.reduce((n, b) => n + b.deny, 0)} deny
      </figcaption>
    </figure>
  );
}

function TopDenied({ tenant, title, rows, filterKey }: { tenant: string; title: string; rows: DeniedKey[]; filterKey: 'tool' | 'subject' }) {
  const ids = useId();
  return (
    <section aria-labelledby={`${ids}-t`} className="card">
      <h2 id={`${ids}-t`}>{title}</h2>
      {rows.length ? (
        <DataTable label={title} columns={[filterKey === 'tool' ? 'Tool' : 'Subject', 'Denied calls', 'Reasons']} compact>
          {rows.map((r) => (
            <tr key={r.key}>
              <td className="mono">
                <a href={href(`/tenants/${tenant}/decisions?decision=deny&${filterKey}=${encodeURIComponent(r.key)}`)}>{r.key}</a>
              </td>
              <td>{r.calls}</td>
              <td>{r.reasons.map((x) => `${x.reason} (${x.calls})`).join(', ')}</td>
            </tr>
          ))}
        </DataTable>
      ) : (
        <p className="muted">Nothing denied in this window.</p>
      )}
    </section>
  );
}
