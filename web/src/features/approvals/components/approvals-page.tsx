import { useId, useState } from 'react';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { may } from '../../../lib/permissions.ts';
import { useLocation } from '../../../lib/router.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { useTenants } from '../../tenants/api/get-tenants.ts';
import { useDecideApproval } from '../api/decide-approval.ts';
import { type Approval, usePendingApprovals } from '../api/get-approvals.ts';

/**
 * The approval queue: calls that wait for a person, in every tenant this person may decide for
 * (admins; editors of the tenant). Each shows who asks, the tool, the exact arguments, the rule
 * that asked and how long it has waited; approving or denying takes a reason. The buttons are
 * offered only where the server takes the decision (see whyNotDecide).
 */
export function ApprovalsPage({ session }: { session: Session }) {
  const loc = useLocation();
  const only = loc.params.get('tenant');
  const tenants = useTenants();
  const decidable = (tenants.data ?? []).map((t) => t.id).filter((id) => may(session, 'approval', 'decide', id) && (!only || id === only));
  return (
    <section className="page">
      <PageHeader
        title="Approvals"
        subtitle="Calls that wait for a person. The agent and its MCP client never approve themselves: approve or deny each call with a reason, kept in the audit log."
      />
      {tenants.isPending ? <Loading what="tenants" /> : null}
      {tenants.error ? <Notice error={tenants.error} /> : null}
      {tenants.data && decidable.length === 0 ? (
        <p className="muted">
          {only
            ? `You may not decide approval requests in ${only}.`
            : 'You may not decide approval requests in any tenant: admins and editors of a tenant decide them.'}
        </p>
      ) : null}
      {decidable.length > 0 && session.approvalsNeedPerson ? (
        <p className="notice notice-info" role="note">
          Only a person signed in through single sign-on may decide approvals on this server: a session opened with an API token, which an agent may hold, sees
          the queue but cannot approve or deny. Sign out and sign in with SSO to decide.
        </p>
      ) : null}
      {decidable.map((tenant) => (
        <TenantQueue key={tenant} tenant={tenant} session={session} highlight={loc.params.get('id')} />
      ))}
    </section>
  );
}

function TenantQueue({ tenant, session, highlight }: { tenant: string; session: Session; highlight: string | null }) {
  const pending = usePendingApprovals(tenant);
  const items = pending.data ?? [];
  // A decided request leaves the queue: what was decided is said here, where the person still looks.
  const [decided, setDecided] = useState<Approval | null>(null);
  return (
    <section aria-label={`Approval requests in ${tenant}`}>
      <h2>{tenant}</h2>
      {pending.isPending ? <Loading what={`approval requests of ${tenant}`} /> : null}
      {pending.error ? <Notice error={pending.error} /> : null}
      <Notice
        success={
          decided
            ? `${decided.state === 'approved' ? 'Approved' : 'Denied'}: ${decided.subject} → ${decided.tool}${decided.state === 'approved' ? ' may run once.' : '.'}`
            : null
        }
      />
      {pending.data && items.length === 0 ? <p className="muted">No call is waiting for approval in {tenant}.</p> : null}
      {items.length ? (
        <ul className="approval-queue">
          {items.map((a) => (
            <ApprovalItem key={a.id} approval={a} refusal={whyNotDecide(session, a)} highlighted={a.id === highlight} onDecided={setDecided} />
          ))}
        </ul>
      ) : null}
    </section>
  );
}

/**
 * Why this session may not decide this request, as the server would refuse it (403), or null when
 * it may: the buttons are offered only to someone whose decision the server takes.
 */
function whyNotDecide(session: Session, a: Approval): string | null {
  if (a.requestedBy === session.actor) return 'You asked for this approval yourself: another person must decide it.';
  if (session.approvalsNeedPerson) return 'Only a person signed in through single sign-on may decide approvals on this server.';
  return null;
}

function ApprovalItem({
  approval: a,
  refusal,
  highlighted,
  onDecided,
}: {
  approval: Approval;
  refusal: string | null;
  highlighted: boolean;
  onDecided: (a: Approval) => void;
}) {
  const ids = useId();
  return (
    <li className={highlighted ? 'card highlighted' : 'card'} aria-labelledby={`${ids}-title`}>
      <h3 id={`${ids}-title`}>
        <code>{a.subject}</code> wants to call <code>{a.tool}</code>
      </h3>
      <dl className="facts">
        <dt>Asked by</dt>
        <dd>{a.reason}</dd>
        <dt>Waiting</dt>
        <dd>
          <time dateTime={a.requestedAt} title={a.requestedAt}>
            {age(a.requestedAt)}
          </time>{' '}
          (expires {new Date(a.expiresAt).toLocaleTimeString()})
        </dd>
        <dt>Request</dt>
        <dd>
          <code>{a.id}</code>
        </dd>
      </dl>
      <h4>Arguments</h4>
      {a.arguments ? <pre className="json">{JSON.stringify(a.arguments, null, 2)}</pre> : <p className="muted">Not shown to your role.</p>}
      {refusal ? <p className="muted">{refusal}</p> : <DecisionForm approval={a} onDecided={onDecided} />}
    </li>
  );
}

/** The reason and the two buttons, for someone whose decision the server takes. */
function DecisionForm({ approval: a, onDecided }: { approval: Approval; onDecided: (a: Approval) => void }) {
  const ids = useId();
  const [reason, setReason] = useState('');
  const [tried, setTried] = useState(false);
  const decide = useDecideApproval();
  const missing = tried && !reason.trim();
  const send = (verdict: 'approve' | 'deny') => {
    setTried(true);
    if (!reason.trim()) return;
    // The promise settles even after the decided request has left the queue (and this item unmounted).
    decide.mutateAsync({ tenant: a.tenant, id: a.id, verdict, reason }).then(onDecided, () => undefined);
  };
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          send('approve');
        }}
      >
        <div className="field">
          <label htmlFor={`${ids}-reason`}>Reason for your decision</label>
          <textarea
            id={`${ids}-reason`}
            rows={2}
            value={reason}
            aria-invalid={missing || undefined}
            aria-describedby={missing ? `${ids}-reason-err` : undefined}
            onChange={(e) => setReason(e.target.value)}
          />
          {missing ? (
            <p id={`${ids}-reason-err`} className="field-error">
              Say why: the reason goes into the audit log with your decision.
            </p>
          ) : null}
        </div>
        <div className="button-row">
          <button type="submit" className="primary" disabled={decide.isPending}>
            Approve this call
          </button>
          <button type="button" className="danger" disabled={decide.isPending} onClick={() => send('deny')}>
            Deny
          </button>
        </div>
      </form>
      <Notice error={decide.error} />
    </>
  );
}

/** How long ago, in words a person scans quickly. */
function age(at: string): string {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(at)) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}
