import { useId, useState } from 'react';
import { Notice } from '../../../components/notice.tsx';
import { Loading } from '../../../components/page.tsx';
import { may } from '../../../lib/permissions.ts';
import { href } from '../../../lib/router.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { BundleDiffView } from '../../bundles/components/bundle-diff-view.tsx';
import { useTenants } from '../../tenants/api/get-tenants.ts';
import { type PromoteResult, usePromote, usePromotePlan } from '../api/promote.ts';

const LISTS = [
  ['roles', 'Roles'],
  ['bindings', 'Bindings (subjects)'],
  ['profiles', 'Profiles'],
  ['grants', 'Connection grants'],
  ['tests', 'Policy tests'],
] as const;

/** What a promotion adds, removes and changes in the target, list by list. */
export function PromotePlanView({ plan }: { plan: Omit<PromoteResult, 'applied'> }) {
  return (
    <fieldset className="plain" aria-label={`Plan: promote ${plan.from} to ${plan.to}`}>
      <ul className="plain" aria-label="What changes in the target's draft">
        {LISTS.map(([key, label]) => {
          const c = plan[key];
          const none = !c.added.length && !c.removed.length && !c.changed.length;
          return (
            <li key={key}>
              <strong>{label}:</strong>{' '}
              {none ? (
                <span className="muted">no change</span>
              ) : (
                <>
                  {c.added.length ? <span>added {c.added.join(', ')}. </span> : null}
                  {c.removed.length ? <span>removed {c.removed.join(', ')}. </span> : null}
                  {c.changed.length ? <span>changed {c.changed.join(', ')}.</span> : null}
                </>
              )}
            </li>
          );
        })}
        <li>
          <strong>Budgets:</strong> {plan.budgetsChanged ? 'replaced by the source tenant’s' : <span className="muted">no change</span>}
        </li>
      </ul>
      <h4>What the target's agents would see differently (its draft, before and after)</h4>
      <BundleDiffView diff={plan.diff} label={`${plan.to}'s draft before and after`} />
    </fieldset>
  );
}

/**
 * "Promote to…": copies this tenant's roles, bindings, profiles, budgets, tests and grants into
 * another tenant's draft (environments are tenants). The plan is always shown before the button.
 */
export function PromotePanel({ tenant, session, policyVersion }: { tenant: string; session: Session; policyVersion: number | undefined }) {
  const ids = useId();
  const tenants = useTenants();
  const targets = (tenants.data ?? []).filter((t) => t.id !== tenant && may(session, 'policy', 'write', t.id));
  const [to, setTo] = useState<string>('');
  const [reason, setReason] = useState('');
  const plan = usePromotePlan(tenant, to || null, policyVersion);
  const promote = usePromote();
  if (!targets.length) return null;
  return (
    <section aria-labelledby={`${ids}-h`} className="card">
      <h2 id={`${ids}-h`}>Promote to…</h2>
      <p className="muted">
        Environments are tenants: copy this tenant's roles, bindings, profiles, budgets, policy tests and grants into another tenant's draft (the inventory is
        shared). The target keeps its own review rule, and publishing it is a separate step there.
      </p>
      <div className="field">
        <label htmlFor={`${ids}-to`}>Target tenant</label>
        <select
          id={`${ids}-to`}
          value={to}
          onChange={(e) => {
            setTo(e.target.value);
            promote.reset();
          }}
        >
          <option value="">Choose a tenant…</option>
          {targets.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name} ({t.id})
            </option>
          ))}
        </select>
      </div>
      {to ? (
        <>
          <h3>Plan: what promoting to {to} would change</h3>
          {plan.isPending ? <Loading what="plan" /> : null}
          {plan.error ? <Notice error={plan.error} /> : null}
          {plan.data ? <PromotePlanView plan={plan.data} /> : null}
          {plan.data ? (
            <form
              aria-label={`Promote to ${to}`}
              onSubmit={(e) => {
                e.preventDefault();
                promote.mutate({ from: tenant, to, reason }, { onSuccess: () => setReason('') });
              }}
            >
              <div className="field">
                <label htmlFor={`${ids}-reason`}>Reason for promoting (required)</label>
                <input id={`${ids}-reason`} required value={reason} onChange={(e) => setReason(e.target.value)} />
              </div>
              <button type="submit" className="primary" disabled={!reason.trim() || promote.isPending}>
                Promote to {to}
              </button>
            </form>
          ) : null}
          {promote.data ? (
            <p role="status" className="notice notice-success">
              Promoted: {to}'s draft now carries this tenant's policy, tests and grants. <a href={href(`/tenants/${to}/publish`)}>Publish {to}</a>
            </p>
          ) : (
            <Notice error={promote.error} />
          )}
        </>
      ) : null}
    </section>
  );
}
