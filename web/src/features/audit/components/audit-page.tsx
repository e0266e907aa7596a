import { useId, useRef, useState } from 'react';
import type { AuditEvent } from '../../../../../policy-schemas/types.gen.ts';
import { Badge } from '../../../components/badge.tsx';
import { DiffView } from '../../../components/diff-view.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { SelectField } from '../../../components/select-field.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { auditActions, auditEntityTypes } from '../../../lib/schema.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { download } from '../../bundles/api/download.ts';
import { useTenants } from '../../tenants/api/get-tenants.ts';
import { useTokens } from '../../tokens/api/get-tokens.ts';
import { useUrlFilters } from '../../../lib/use-url-filters.ts';
import { auditExportPath, useAudit, useAuditVerification, type AuditFilters } from '../api/get-audit.ts';
import { saveCheckpoint, useLatestCheckpoint } from '../api/get-checkpoints.ts';

const keys = ['tenant', 'actor', 'entityType', 'entityId', 'action', 'from', 'to'] as const;

/** The change history: filters in the URL, each event with its before/after diff, export and the chain check. */
export function AuditPage(_: { session: Session }) {
  const { filters, setFilter, setFilters } = useUrlFilters<AuditFilters>('/audit', keys);
  // Dates are chosen as days; `to` includes the whole day.
  const apiFilters: AuditFilters = {
    ...filters,
    from: filters.from ? new Date(`${filters.from}T00:00:00`).toISOString() : undefined,
    to: filters.to ? new Date(`${filters.to}T23:59:59.999`).toISOString() : undefined,
  };
  const audit = useAudit(apiFilters);
  const verify = useAuditVerification();
  const checkpoint = useLatestCheckpoint();
  // Every export signs a checkpoint of the head: show it once the download has started.
  const exportAs = (format: 'csv' | 'jsonl') =>
    download(auditExportPath(apiFilters, format), `toolgate-audit.${format}`).then(() => checkpoint.refetch(), setExportError);
  const tenants = useTenants();
  const tokens = useTokens();
  // People (`user:<sub>`) seen in any page loaded so far, kept while filters narrow the timeline,
  // so that their names stay suggested and understood.
  const people = useRef(new Map<string, { label: string; name?: string | null; email?: string | null }>()).current;
  for (const page of audit.data?.pages ?? []) {
    for (const e of page.items) {
      if (!people.has(e.actor) && personLabel(e)) people.set(e.actor, { label: personLabel(e)!, name: e.actorName, email: e.actorEmail });
    }
  }
  const actorLabel = (actor: string) => {
    const t = tokens.data?.find((x) => `token:${x.id}` === actor);
    return t ? `${t.label} (${t.role})` : (people.get(actor)?.label ?? actor);
  };
  // The actor filter takes the names the timeline shows ("label (role)" or a label alone for a
  // token, "Name <email>", a name or an email for a person) as well as raw ids.
  const actorId = (typed: string) => {
    const name = typed.trim();
    const t = tokens.data?.find((x) => `${x.label} (${x.role})` === name) ?? tokens.data?.find((x) => x.label === name);
    if (t) return `token:${t.id}`;
    for (const [actor, p] of people) if (p.label === name || p.name === name) return actor;
    // "Name <email>" of a person not seen yet: the server finds people by email.
    return /<([^<>\s]+@[^<>\s]+)>$/.exec(name)?.[1] ?? name;
  };
  const [actorText, setActorText] = useState(() => (filters.actor ? actorLabel(filters.actor) : ''));
  const filterBy = (patch: Partial<Record<(typeof keys)[number], string>>) => {
    setFilters(patch);
    if (patch.actor !== undefined) setActorText(actorLabel(patch.actor));
  };
  const [exportError, setExportError] = useState<unknown>(null);
  const ids = useId();
  const events = audit.data?.pages.flatMap((p) => p.items) ?? [];
  const v = verify.data;
  const broken = v?.firstBroken;
  return (
    <section className="page">
      <PageHeader
        title="Audit"
        subtitle="Who changed what, when and why. Every event is chained to the one before it."
        actions={
          <>
            <button type="button" onClick={() => void exportAs('csv')}>
              Export CSV
            </button>
            <button type="button" onClick={() => void exportAs('jsonl')}>
              Export JSONL
            </button>
          </>
        }
      />
      {exportError ? <Notice error={exportError} /> : null}
      <div className="verify-banner" role="status" aria-label="Chain verification">
        {verify.isPending ? (
          'Checking the chain…'
        ) : verify.error ? (
          <Notice error={verify.error} />
        ) : v?.ok ? (
          <>
            <Badge tone="ok">chain verified</Badge> {v.count} events, every hash links to the one before.
          </>
        ) : (
          <>
            <Badge tone="bad">chain broken</Badge> First broken link at event{' '}
            {broken ? `#${broken.seq} (${broken.reason}${broken.message ? `: ${broken.message}` : ''})` : '?'}.
          </>
        )}{' '}
        <button type="button" className="link-button" onClick={() => verify.refetch()}>
          Verify again
        </button>
      </div>
      <section className="verify-banner" aria-label="Latest checkpoint">
        {checkpoint.isPending ? (
          'Loading the latest checkpoint…'
        ) : checkpoint.error ? (
          <Notice error={checkpoint.error} />
        ) : checkpoint.data ? (
          <>
            <Badge tone="info">checkpoint</Badge> Event #{checkpoint.data.seq}, signed {new Date(checkpoint.data.at).toLocaleString()},{' '}
            <span className="mono small break">hash {checkpoint.data.hash}</span>.{' '}
            <button type="button" onClick={() => saveCheckpoint(checkpoint.data!)}>
              Download checkpoint
            </button>
            <p className="muted small">
              Keep checkpoints outside Toolgate: <code>toolgate audit verify EXPORT --checkpoint FILE</code> proves a later export extends this one unchanged,
              even if someone rewrote the database and recomputed every hash.
            </p>
          </>
        ) : (
          <span className="muted">No checkpoint yet: one is signed on every export, after 1,000 events, and within 10 minutes of a change.</span>
        )}
      </section>
      <search className="filters" aria-label="Filter audit events">
        <SelectField
          empty="Any"
          label="Tenant"
          value={filters.tenant}
          options={(tenants.data ?? []).map((t) => t.id)}
          onChange={(v) => setFilter('tenant', v)}
        />
        <div className="field">
          <label htmlFor={`${ids}-actor`}>Actor</label>
          <input
            id={`${ids}-actor`}
            list={`${ids}-actors`}
            value={actorText}
            placeholder="a name as the timeline shows it, user:… or an email"
            onChange={(e) => {
              setActorText(e.target.value);
              setFilter('actor', actorId(e.target.value));
            }}
          />
          <datalist id={`${ids}-actors`}>
            <option value="system" />
            {(tokens.data ?? []).map((t) => (
              <option key={t.id} value={`${t.label} (${t.role})`} />
            ))}
            {[...people].map(([actor, p]) => (
              <option key={actor} value={p.label} />
            ))}
          </datalist>
        </div>
        <SelectField empty="Any" label="Entity type" value={filters.entityType} options={auditEntityTypes} onChange={(v) => setFilter('entityType', v)} />
        <TextField label="Entity id" value={filters.entityId ?? ''} onChange={(v) => setFilter('entityId', v)} />
        <SelectField empty="Any" label="Action" value={filters.action} options={auditActions} onChange={(v) => setFilter('action', v)} />
        <TextField label="From" type="date" value={filters.from ?? ''} onChange={(v) => setFilter('from', v)} />
        <TextField label="To" type="date" value={filters.to ?? ''} onChange={(v) => setFilter('to', v)} />
      </search>
      {audit.isPending ? <Loading what="history" /> : null}
      {audit.error ? <Notice error={audit.error} /> : null}
      <ol className="timeline" aria-label="Audit timeline">
        {events.map((e) => (
          <AuditItem key={e.seq} event={e} actorLabel={actorLabel} filterBy={filterBy} />
        ))}
      </ol>
      {audit.data && !events.length ? <p className="muted">No event matches these filters.</p> : null}
      {/* Newest first: older events continue below the last one shown. */}
      {audit.hasNextPage ? (
        <button type="button" onClick={() => audit.fetchNextPage()} disabled={audit.isFetchingNextPage}>
          {audit.isFetchingNextPage ? 'Loading…' : 'Load older events'}
        </button>
      ) : null}
    </section>
  );
}

const actionTone = {
  create: 'ok',
  update: 'info',
  delete: 'bad',
  publish: 'ok',
  rollback: 'warn',
  sync: 'info',
  approve: 'ok',
  rotate: 'warn',
  promote: 'warn',
  retire: 'warn',
  sign: 'warn',
  refuse: 'bad',
  request: 'info',
  reject: 'bad',
} as const;

function AuditItem({
  event: e,
  actorLabel,
  filterBy,
}: {
  event: AuditEvent;
  actorLabel: (actor: string) => string;
  filterBy: (patch: { actor?: string; entityType?: string; entityId?: string }) => void;
}) {
  const who = personLabel(e) ?? actorLabel(e.actor);
  // The summary holds no control (nothing interactive nests in it, and clicking a row only opens
  // it); the filters sit in the opened event.
  return (
    <li className="timeline-item">
      <details>
        <summary>
          <span className="seq mono">#{e.seq}</span> <time dateTime={e.at}>{new Date(e.at).toLocaleString()}</time>{' '}
          <Badge tone={actionTone[e.action]}>{e.action}</Badge> <strong>{e.entityType}</strong> <span className="mono">{e.entityId}</span>
          {e.tenant ? <span className="muted"> in {e.tenant}</span> : null} <span className="muted">by {who}</span>
          {e.reason ? <span className="reason"> — “{e.reason}”</span> : null}
        </summary>
        <div className="button-row">
          <button type="button" className="link-button" onClick={() => filterBy({ entityType: e.entityType, entityId: e.entityId })}>
            Show only events on {e.entityType} {e.entityId}
          </button>
          <button type="button" className="link-button" onClick={() => filterBy({ actor: e.actor })}>
            Show only events by {who}
          </button>
        </div>
        <DiffView before={e.before} after={e.after} label={`Changes in event ${e.seq}`} empty="No field-level difference recorded." />
        <p className="muted small mono">
          request {e.requestId ?? '—'} · hash {e.hash.slice(0, 16)}… · prev {e.prevHash.slice(0, 16)}…
        </p>
      </details>
    </li>
  );
}

/** How the timeline names a person: "Name <email>", or whichever of the two the provider gave. */
function personLabel(e: AuditEvent): string | undefined {
  if (!e.actorName && !e.actorEmail) return undefined;
  return [e.actorName, e.actorEmail && `<${e.actorEmail}>`].filter(Boolean).join(' ');
}
