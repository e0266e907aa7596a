import { type ReactNode, useId } from 'react';
import type { ImpactReport } from '../../../../../policy-schemas/types.gen.ts';
import { Notice } from '../../../components/notice.tsx';
import { Loading } from '../../../components/page.tsx';
import { href } from '../../../lib/router.ts';
import { useImpact } from '../api/get-impact.ts';
import { simulatorHref } from './decisions-page.tsx';

const outcome = (from: string, to: string): string =>
  to === 'deny'
    ? 'would now be denied'
    : to === 'require_approval'
      ? 'would now need approval'
      : from === 'require_approval'
        ? 'would no longer need approval'
        : 'would now be allowed';

function windowWords(r: ImpactReport): string {
  const days = Math.round((Date.parse(r.to) - Date.parse(r.from)) / 86400_000);
  return days === 7 ? 'last week' : `in the last ${days} day(s)`;
}

/** What publishing the saved draft would change in the traffic runtimes logged: shown beside the diff. */
export function ImpactView({ tenant, policyVersion }: { tenant: string; policyVersion: number | undefined }) {
  const impact = useImpact(tenant, policyVersion);
  return (
    <ImpactReportView tenant={tenant} report={impact.data}>
      {impact.isPending && policyVersion !== undefined ? <Loading what="impact" /> : null}
      {impact.error ? <Notice error={impact.error} /> : null}
    </ImpactReportView>
  );
}

/** An impact report as computed (by the publish screen now, or stored with a publish request). */
export function ImpactReportView({ tenant, report: r, children }: { tenant: string; report: ImpactReport | null | undefined; children?: ReactNode }) {
  const ids = useId();
  return (
    <section aria-labelledby={`${ids}-impact`} className="impact">
      <h3 id={`${ids}-impact`}>Impact on logged traffic</h3>
      {children}
      {r === null ? <p className="muted">The impact was not computed (the server was busy replaying other traffic when this was asked).</p> : null}
      {r ? (
        r.calls === 0 ? (
          <p className="muted">No decision was logged {windowWords(r)}, so there is no traffic to replay. Runtimes log decisions as they decide calls.</p>
        ) : r.changes.length === 0 ? (
          <p role="status" className="notice notice-info">
            None of the {r.calls} call(s) logged {windowWords(r)} ({r.requests} distinct request(s)) would be decided differently.
          </p>
        ) : (
          <>
            <p role="status" className="notice notice-warn">
              {r.totals.allowToDeny} call(s) would now be denied, {r.totals.denyToAllow} allowed, {r.totals.toApproval} would need approval and{' '}
              {r.totals.fromApproval} would no longer need it, of {r.calls} call(s) logged {windowWords(r)}.
              {r.truncated ? ` Only the ${r.requests} most recent distinct requests were replayed.` : ''}
            </p>
            <ul className="impact-changes" aria-label="Changed decisions">
              {r.changes.map((c) => (
                <li key={`${c.subject} ${c.tool} ${c.from} ${c.to}`}>
                  <strong>{c.calls}</strong> call(s) of <code>{c.subject}</code> to <code>{c.tool}</code> {windowWords(r)} {outcome(c.from, c.to)}
                  {c.reason ? <span className="muted"> ({c.reason})</span> : null}.{' '}
                  {c.examples[0] ? <a href={simulatorHref(tenant, c.examples[0])}>Open an example in the simulator</a> : null}{' '}
                  <a href={href(`/tenants/${tenant}/decisions?subject=${encodeURIComponent(c.subject)}&tool=${encodeURIComponent(c.tool)}`)}>See the records</a>
                </li>
              ))}
            </ul>
          </>
        )
      ) : null}
      {r?.constraints?.length ? (
        <ul className="impact-changes" aria-label="Changed argument constraints">
          {r.constraints.map((c) => (
            <li key={`${c.tool} ${c.change} ${c.role} ${c.index}`}>
              <strong>{c.calls}</strong> logged call(s) to <code>{c.tool}</code>{' '}
              {c.change === 'added' ? 'would now have their arguments checked by' : 'would no longer be checked by'} constraint {c.index} of role{' '}
              <code>{c.role}</code> ({c.otherwise === 'deny' ? 'else denied' : 'else approval'}: {c.reason})
              {c.change === 'added' ? '; whether each passes depends on arguments the log does not keep.' : '.'}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
