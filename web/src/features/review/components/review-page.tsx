import { useId, useState } from 'react';
import { Badge, type BadgeTone } from '../../../components/badge.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading } from '../../../components/page.tsx';
import { may } from '../../../lib/permissions.ts';
import { href } from '../../../lib/router.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { BundleDiffView } from '../../bundles/components/bundle-diff-view.tsx';
import { ImpactReportView } from '../../decisions/components/impact-view.tsx';
import { TestOutcomesView } from '../../policy-tests/components/test-results.tsx';
import { useDecidePublishRequest } from '../api/decide-publish-request.ts';
import { type PublishRequest, usePublishRequest, usePublishRequests } from '../api/get-publish-requests.ts';

const statusTone: Record<PublishRequest['status'], BadgeTone> = { pending: 'warn', published: 'ok', rejected: 'bad' };

/** The audit name of the signed-in identity, as a request's `requestedBy` holds it. */
export function sessionActor(session: Session): string {
  return session.user ? session.user.id : `token:${session.tokenId}`;
}

/** Whether this session asked for the request (then another person must decide it). */
export function askedByMe(session: Session, r: PublishRequest): boolean {
  if (sessionActor(session) === r.requestedBy) return true;
  const email = session.user?.email;
  return !!email && !!r.requestedByEmail && email.toLowerCase() === r.requestedByEmail.toLowerCase();
}

/** Who asked for a request (or decided it), in words: their label, with the email of a person. */
export function requester(r: PublishRequest): string {
  return who(r.requestedBy, r.requestedByEmail, r.requestedByLabel);
}

export function decider(r: PublishRequest): string {
  return who(r.decidedBy ?? '', r.decidedByEmail, r.decidedByLabel);
}

function who(actor: string, email?: string | null, label?: string | null): string {
  if (label) return email && !label.includes(email) ? `${label} <${email}>` : label;
  return email ? `${email} (${actor})` : actor;
}

/** The tenant's publish requests: the open ones first, each linking to its review page. */
export function ReviewList({ tenant }: { tenant: string }) {
  const requests = usePublishRequests(tenant);
  const items = requests.data ?? [];
  return (
    <section aria-label="Publish requests">
      <h2>Publish requests</h2>
      {requests.isPending ? <Loading what="publish requests" /> : null}
      {requests.error ? <Notice error={requests.error} /> : null}
      {requests.data && !items.length ? (
        <p className="muted">
          No publish request yet. When the tenant's policy sets <code>review.publish: required</code>, Publish asks another person to review the change.
        </p>
      ) : null}
      {items.length ? (
        <div className="table-wrap">
          <DataTable label="Publish requests" columns={['Request', 'Status', 'Asked by', 'When', 'Why', 'Decided by']}>
            {items.map((r) => (
              <tr key={r.id}>
                <td>
                  <a href={href(`/tenants/${tenant}/reviews/${r.id}`)}>
                    {r.rollbackTo ? `Roll back to v${r.rollbackTo}` : `Publish ${r.revision.slice(7, 19)}`}
                  </a>
                </td>
                <td>
                  <Badge tone={statusTone[r.status]}>{r.status}</Badge> {r.stale ? <Badge tone="bad">stale</Badge> : null}
                  {r.publishedVersion ? ` as v${r.publishedVersion}` : ''}
                </td>
                <td>{requester(r)}</td>
                <td>{new Date(r.requestedAt).toLocaleString()}</td>
                <td>{r.reason}</td>
                <td>{r.decidedBy ? decider(r) : '—'}</td>
              </tr>
            ))}
          </DataTable>
        </div>
      ) : null}
    </section>
  );
}

/** One publish request: what it would ship (the publish screen's diff, impact and tests, as asked) and the decision. */
export function ReviewPage({ tenant, id, session }: { tenant: string; id: string; session: Session }) {
  const request = usePublishRequest(tenant, id);
  const r = request.data;
  return (
    <div className="publish-review">
      <p>
        <a href={href(`/tenants/${tenant}/reviews`)}>All publish requests of this tenant</a>
      </p>
      {request.isPending ? <Loading what="publish request" /> : null}
      {request.error ? <Notice error={request.error} /> : null}
      {r ? <Review tenant={tenant} r={r} session={session} /> : null}
    </div>
  );
}

function Review({ tenant, r, session }: { tenant: string; r: PublishRequest; session: Session }) {
  const ids = useId();
  const decide = useDecidePublishRequest();
  const [reason, setReason] = useState('');
  const [tried, setTried] = useState<'approve' | 'reject' | null>(null);
  const mine = askedByMe(session, r);
  const canDecide = may(session, 'bundle', 'publish', tenant);
  const what = r.rollbackTo ? `roll back to v${r.rollbackTo}` : `publish the draft (revision ${r.revision.slice(7, 19)}…)`;
  const send = (verdict: 'approve' | 'reject') => {
    setTried(verdict);
    decide.mutate({ tenant, id: r.id, verdict, reason }, { onSuccess: () => setReason('') });
  };
  const reasonMissing = tried === 'reject' && !reason.trim();
  return (
    <section aria-labelledby={`${ids}-h`} className="card">
      <h2 id={`${ids}-h`}>
        Publish request: {what} <Badge tone={statusTone[r.status]}>{r.status}</Badge>
      </h2>
      <p>
        Asked by <strong>{requester(r)}</strong> on {new Date(r.requestedAt).toLocaleString()}
        {r.basedOn ? `, against v${r.basedOn}` : ', before the first version'}: <q>{r.reason}</q>
        {r.forced ? (
          <>
            {' '}
            <Badge tone="bad">tests failed, forced by an admin</Badge>
          </>
        ) : null}
      </p>
      <p className="mono small break">{r.revision}</p>
      {r.stale ? (
        <p role="alert" className="notice notice-error">
          The draft changed since this was asked, so approving it would publish nothing: the change under review is no longer the draft. Ask for a new review
          from <a href={href(`/tenants/${tenant}/publish`)}>Publish</a>.
        </p>
      ) : null}
      {r.status === 'published' ? (
        <p role="status" className="notice notice-success">
          Approved by {decider(r)} on {new Date(r.decidedAt ?? '').toLocaleString()} and published as v{r.publishedVersion}
          {r.decisionReason ? `: ${r.decisionReason}` : '.'}
        </p>
      ) : null}
      {r.status === 'rejected' ? (
        <p role="status" className="notice notice-warn">
          Rejected by {decider(r)} on {new Date(r.decidedAt ?? '').toLocaleString()}: {r.decisionReason}
        </p>
      ) : null}

      <h3>{r.basedOn ? `Changes since v${r.basedOn}` : 'What the first version holds'}</h3>
      {r.diff ? <BundleDiffView diff={r.diff} label="Changes under review" /> : null}
      <ImpactReportView tenant={tenant} report={r.impact} />
      <TestOutcomesView outcomes={r.tests ?? []} title="Policy tests on the reviewed content" where="on the reviewed content" />

      {r.status === 'pending' ? (
        canDecide ? (
          <form
            aria-label="Review"
            onSubmit={(e) => {
              e.preventDefault();
              send('approve');
            }}
          >
            {mine ? (
              <p className="notice notice-info">You asked for this publish: another person (an admin or an editor of {tenant}) must approve or reject it.</p>
            ) : null}
            <div className="field">
              <label htmlFor={`${ids}-reason`}>Reason for your decision (required to reject)</label>
              <textarea
                id={`${ids}-reason`}
                rows={2}
                value={reason}
                aria-invalid={reasonMissing || undefined}
                aria-describedby={reasonMissing ? `${ids}-reason-err` : undefined}
                onChange={(e) => setReason(e.target.value)}
              />
              {reasonMissing ? (
                <p id={`${ids}-reason-err`} className="field-error">
                  Say why you reject it: the requester reads this.
                </p>
              ) : null}
            </div>
            <div className="button-row">
              <button type="submit" className="primary" disabled={mine || r.stale || decide.isPending}>
                Approve and publish
              </button>
              <button
                type="button"
                className="danger"
                disabled={mine || decide.isPending}
                onClick={() => (reason.trim() ? send('reject') : setTried('reject'))}
              >
                Reject
              </button>
            </div>
          </form>
        ) : (
          <p className="muted">Your role cannot review publishes for this tenant.</p>
        )
      ) : null}
      <Notice
        error={decide.error}
        success={
          decide.data
            ? decide.data.status === 'published'
              ? `Approved: published as v${decide.data.publishedVersion}.`
              : decide.data.status === 'rejected'
                ? 'Rejected; the requester sees your reason.'
                : null
            : null
        }
      />
    </section>
  );
}
