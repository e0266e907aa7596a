import { useEffect, useId, useRef, useState } from 'react';
import { Badge } from '../../../components/badge.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading } from '../../../components/page.tsx';
import { may } from '../../../lib/permissions.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { usePolicy } from '../../tenants/api/get-policy.ts';
import { useResetPolicy } from '../../tenants/api/reset-policy.ts';
import type { BundleVersion } from '../../../../../policy-schemas/types.gen.ts';
import { useBundles } from '../api/get-bundles.ts';
import { useDiff } from '../api/get-diff.ts';
import { download } from '../api/download.ts';
import { isPublishRequest, usePublish, type PublishResult } from '../api/publish.ts';
import { ApiError } from '../../../lib/api-client.ts';
import { href } from '../../../lib/router.ts';
import { type PublishRequest, usePublishRequests } from '../../review/api/get-publish-requests.ts';
import { decider, requester } from '../../review/components/review-page.tsx';
import { PromotePanel } from '../../review/components/promote-panel.tsx';
import { RollbackPreview } from './rollback-preview.tsx';
import { useRuntimes } from '../api/get-runtimes.ts';
import { verifyBundle, type Verification } from '../api/verify-bundle.ts';
import { BundleDiffView } from './bundle-diff-view.tsx';
import { ImpactView } from '../../decisions/components/impact-view.tsx';
import { TestResults } from '../../policy-tests/components/test-results.tsx';

const ROOT_STORAGE = 'toolgate.trustedRoot';

/** Diff of the draft against the latest bundle, publish with a reason, history, rollback, downloads, runtimes. */
export function PublishPage({ tenant, session }: { tenant: string; session: Session }) {
  const bundles = useBundles(tenant);
  const policy = usePolicy(tenant);
  const editable = may(session, 'bundle', 'publish', tenant);
  const latest = bundles.data?.[0];
  const diff = useDiff(tenant, latest?.version, 'draft', policy.data?.version);
  const publish = usePublish();
  const reset = useResetPolicy();
  const [reason, setReason] = useState('');
  // A rollback has its own reason: typing it never fills in (or enables) Publish.
  const [rollbackReason, setRollbackReason] = useState('');
  const [resetDraft, setResetDraft] = useState(true);
  // Admins may publish (or roll back) past failing policy tests; the failures go into the audit
  // event. Each form has its own choice, as it has its own reason.
  const [force, setForce] = useState(false);
  const [forceRollback, setForceRollback] = useState(false);
  // Under the tenant's review rule an admin may still publish at once, with a reason, audited as an emergency.
  const [emergency, setEmergency] = useState(false);
  const [asked, setAsked] = useState<PublishRequest | null>(null);
  const reviewRequired = policy.data?.review?.publish === 'required';
  const forceBox = useRef<HTMLInputElement>(null);
  const published = usePublishRequests(tenant, 'published');
  const pending = usePublishRequests(tenant, 'pending');
  const reviewOf = new Map((published.data ?? []).map((r) => [r.publishedVersion, r]));
  const [result, setResult] = useState<(PublishResult & { rollbackTo?: number; unchanged: boolean; draftReset?: boolean }) | null>(null);
  const [rollbackTo, setRollbackTo] = useState<number | null>(null);
  // Choosing a version to roll back to opens its form: focus goes to the reason it asks for.
  const rollbackReasonField = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (rollbackTo !== null) rollbackReasonField.current?.focus();
  }, [rollbackTo]);
  const [compare, setCompare] = useState<number | null>(null);
  const [verification, setVerification] = useState<Verification | null>(null);
  // The root public key an admin checks against; public data, remembered in this browser only.
  const [rootText, setRootText] = useState(() => localStorage.getItem(ROOT_STORAGE) ?? '');
  const [downloadError, setDownloadError] = useState<unknown>(null);
  const ids = useId();
  const base = `/v1/tenants/${encodeURIComponent(tenant)}/bundles`;
  const get = (path: string, name: string) => {
    setDownloadError(null);
    download(path, name).catch(setDownloadError);
  };

  const [action, setAction] = useState<'publish' | 'rollback'>('publish');
  // The answer shows beside the form that asked: publish in its card, rollback above the history.
  const testsFailed = publish.error instanceof ApiError && publish.error.code === 'tests_failed' ? publish.error : null;
  const outcome = testsFailed ? (
    <div role="alert" className="notice notice-error">
      <strong>Policy tests fail</strong> — {testsFailed.errors.length} expectation(s) do not hold on what you would publish:
      <ul>
        {testsFailed.errors.map((fe) => (
          <li key={fe.pointer}>
            <code>{fe.pointer}</code> {fe.message}
          </li>
        ))}
      </ul>
      {may(session, 'bundle', 'force', tenant) ? (
        <p>
          Fix the policy or the <a href={href(`/tenants/${tenant}/tests`)}>tests</a>, or tick{' '}
          <button type="button" className="link-button" onClick={() => forceBox.current?.focus()}>
            “{action === 'publish' ? 'Publish' : 'Roll back'} even if policy tests fail”
          </button>{' '}
          above the button to publish anyway (recorded in the audit log as forced).
        </p>
      ) : (
        <p>
          Fix the policy or the <a href={href(`/tenants/${tenant}/tests`)}>tests</a>; only an admin may publish past failing tests.
        </p>
      )}
    </div>
  ) : asked ? (
    <p role="status" className="notice notice-info">
      Sent for review: another person must approve it before it is published.{' '}
      <a href={href(`/tenants/${tenant}/reviews/${asked.id}`)}>Open the publish request</a>
    </p>
  ) : (
    <Notice
      error={publish.error ?? reset.error}
      success={
        result
          ? result.unchanged
            ? `Nothing changed: version ${result.version} is still current.`
            : result.rollbackTo !== undefined
              ? `Rolled back: version ${result.version} now carries the content of v${result.rollbackTo}.${result.draftReset ? ` The draft was reset to v${result.rollbackTo}'s policy and grants, so there is nothing left to re-publish.` : ''}`
              : `Published version ${result.version}.`
          : null
      }
    />
  );
  const doPublish = (target?: number) => {
    setAction(target === undefined ? 'publish' : 'rollback');
    setResult(null);
    setAsked(null);
    setVerification(null);
    reset.reset();
    const before = latest?.version;
    const why = target === undefined ? reason : rollbackReason;
    const forced = target === undefined ? force : forceRollback;
    publish.mutate(
      { tenant, reason: why, rollbackTo: target, ...(forced ? { force: true } : {}), ...(emergency ? { emergency: true } : {}) },
      {
        onSuccess: (r) => {
          if (isPublishRequest(r)) {
            setAsked(r);
            if (target === undefined) setReason('');
            else {
              setRollbackReason('');
              setRollbackTo(null);
            }
            return;
          }
          setEmergency(false);
          const shown = { ...r, rollbackTo: target, unchanged: r.version === before };
          setResult(shown);
          if (target === undefined) {
            setReason('');
            setForce(false);
          } else {
            setRollbackReason('');
            setForceRollback(false);
            setRollbackTo(null);
            if (resetDraft) {
              reset.mutate(
                { tenant, version: target, policyVersion: policy.data?.version, reason: `Draft reset to v${target} after rolling back: ${why}` },
                { onSuccess: () => setResult({ ...shown, draftReset: true }) },
              );
            }
          }
        },
      },
    );
  };

  return (
    <div className="publish">
      <div className="two-col">
        <section aria-labelledby={`${ids}-latest`} className="card">
          <h2 id={`${ids}-latest`}>Latest bundle</h2>
          {bundles.isPending ? <Loading what="versions" /> : null}
          {bundles.error ? <Notice error={bundles.error} /> : null}
          {bundles.data && !latest ? <p className="muted">Nothing published yet.</p> : null}
          {latest ? (
            <>
              <output className="big-number" aria-label="Latest version">
                v{latest.version}
              </output>
              <p className="mono small break">{latest.revision}</p>
              <p className="muted">
                Published {new Date(latest.publishedAt).toLocaleString()} by {latest.publishedBy} · expires {new Date(latest.expiresAt).toLocaleString()} · key{' '}
                <span className="mono break">{latest.kid}</span>
              </p>
              <div className="button-row">
                <button type="button" onClick={() => get(`${base}/${latest.version}`, `${tenant}-v${latest.version}.bundle.json`)}>
                  Download bundle.json
                </button>
                <button type="button" onClick={() => get(`${base}/${latest.version}/signature`, `${tenant}-v${latest.version}.bundle.jws`)}>
                  Download signature
                </button>
                <button type="button" onClick={() => get('/.well-known/jwks.json', 'jwks.json')}>
                  Download JWKS
                </button>
                <button
                  type="button"
                  onClick={() => {
                    setVerification(null);
                    localStorage.setItem(ROOT_STORAGE, rootText.trim());
                    verifyBundle(tenant, latest.version, rootText.trim() ? { kind: 'pasted', text: rootText } : { kind: 'server' }).then(setVerification);
                  }}
                >
                  Verify signature
                </button>
              </div>
              <div className="field">
                <label htmlFor={`${ids}-root`}>Root public key to check against (what your runtimes are configured with)</label>
                <textarea
                  id={`${ids}-root`}
                  rows={2}
                  className="mono small"
                  placeholder='{"keys":[{"kid":"…","kty":"OKP","crv":"Ed25519","x":"…"}]} (toolgate keys root)'
                  value={rootText}
                  onChange={(e) => setRootText(e.target.value)}
                />
                <p className="muted small">
                  Only a root you got outside this server adds trust. Left empty, the check uses the root this server's own key set names: that shows the server
                  is consistent, not that it is the server your runtimes trust.
                </p>
              </div>
              {verification ? (
                verification.ok ? (
                  <p role="status" className={verification.source === 'pasted' ? 'notice notice-success' : 'notice notice-warn'}>
                    {verification.source === 'pasted'
                      ? `Verified against your root key ${verification.root}: key set v${verification.keySetVersion} lists key ${verification.kid} (${verification.keyStatus}), which signed v${latest.version} (${verification.bytes} bytes).`
                      : `Consistent, but not proof: v${latest.version} (${verification.bytes} bytes) is signed by key ${verification.kid} (${verification.keyStatus}) of key set v${verification.keySetVersion}, signed by the root this server names (${verification.root}). A compromised server could name its own root: paste your root key to check what your runtimes check.`}
                  </p>
                ) : (
                  <p role="alert" className="notice notice-error">
                    Signature check failed: {verification.reason}
                  </p>
                )
              ) : null}
              {downloadError ? <Notice error={downloadError} /> : null}
            </>
          ) : null}
        </section>

        <section aria-labelledby={`${ids}-pub`} className="card">
          <h2 id={`${ids}-pub`}>Publish the draft</h2>
          {pending.data?.length ? (
            <ul className="notice notice-info" aria-label="Publish requests waiting for review">
              {pending.data.map((r) => (
                <li key={r.id}>
                  <a href={href(`/tenants/${tenant}/reviews/${r.id}`)}>
                    {r.rollbackTo ? `Roll back to v${r.rollbackTo}` : 'Publish'}, asked by {requester(r)}
                  </a>{' '}
                  waits for review{r.stale ? ' (stale: the draft changed since)' : ''}: {r.reason}
                </li>
              ))}
            </ul>
          ) : null}
          {latest ? (
            <>
              <h3>Changes since v{latest.version}</h3>
              {diff.isPending ? <Loading what="diff" /> : null}
              {diff.error ? <Notice error={diff.error} /> : null}
              {diff.data ? <BundleDiffView diff={diff.data} label="Draft against the latest bundle" /> : null}
            </>
          ) : (
            <p className="muted">The first publish creates version 1.</p>
          )}
          <ImpactView tenant={tenant} policyVersion={policy.data?.version} />
          <TestResults tenant={tenant} policyVersion={policy.data?.version} title="Policy tests on the draft" />
          {editable ? (
            <form
              aria-label="Publish"
              onSubmit={(e) => {
                e.preventDefault();
                doPublish();
              }}
            >
              <div className="field">
                <label htmlFor={`${ids}-reason`}>Reason for publishing (required)</label>
                <textarea id={`${ids}-reason`} rows={2} required value={reason} onChange={(e) => setReason(e.target.value)} />
              </div>
              {may(session, 'bundle', 'force', tenant) ? (
                <label className="check">
                  <input ref={action === 'publish' ? forceBox : undefined} type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} />{' '}
                  Publish even if policy tests fail (recorded in the audit log as forced)
                </label>
              ) : null}
              {reviewRequired ? (
                <p className="muted small">This tenant's policy asks for a second person: Publish sends the change for review instead of publishing it.</p>
              ) : null}
              {reviewRequired && may(session, 'bundle', 'force', tenant) ? (
                <label className="check">
                  <input type="checkbox" checked={emergency} onChange={(e) => setEmergency(e.target.checked)} /> Emergency: publish now without a second person
                  (admin only; recorded in the audit log as an emergency publish, with your reason)
                </label>
              ) : null}
              <button type="submit" className="primary" disabled={!reason.trim() || publish.isPending}>
                {publish.isPending ? 'Publishing…' : reviewRequired && !emergency ? 'Ask for review' : 'Publish'}
              </button>
            </form>
          ) : (
            <p className="muted">Your role cannot publish for this tenant.</p>
          )}
          {action === 'publish' ? outcome : null}
        </section>
      </div>

      <section aria-labelledby={`${ids}-hist`}>
        <h2 id={`${ids}-hist`}>Version history</h2>
        {action === 'rollback' ? outcome : null}
        {rollbackTo !== null ? (
          <form
            className="card rollback"
            aria-label={`Roll back to version ${rollbackTo}`}
            onSubmit={(e) => {
              e.preventDefault();
              doPublish(rollbackTo);
            }}
          >
            <p>
              Roll back to v{rollbackTo}: publishes a new version with v{rollbackTo}'s content.
            </p>
            <div className="field">
              <label htmlFor={`${ids}-rb-reason`}>Reason for rolling back (required)</label>
              <input ref={rollbackReasonField} id={`${ids}-rb-reason`} required value={rollbackReason} onChange={(e) => setRollbackReason(e.target.value)} />
            </div>
            <label className="check">
              <input type="checkbox" checked={resetDraft} onChange={(e) => setResetDraft(e.target.checked)} /> Also reset the draft to v{rollbackTo}'s policy
              and grants
              <span className="muted small"> (otherwise the next publish ships the rolled-back change again)</span>
            </label>
            <RollbackPreview tenant={tenant} from={latest?.version} to={rollbackTo} />
            {may(session, 'bundle', 'force', tenant) ? (
              <label className="check">
                <input
                  ref={action === 'rollback' ? forceBox : undefined}
                  type="checkbox"
                  checked={forceRollback}
                  onChange={(e) => setForceRollback(e.target.checked)}
                />{' '}
                Roll back even if policy tests fail (recorded as forced)
              </label>
            ) : null}
            <div className="button-row">
              <button type="submit" className="primary danger" disabled={!rollbackReason.trim() || publish.isPending}>
                Roll back to v{rollbackTo}
              </button>
              <button type="button" onClick={() => setRollbackTo(null)}>
                Cancel
              </button>
            </div>
          </form>
        ) : null}
        {bundles.data?.length ? (
          <div className="table-wrap">
            <DataTable label="Versions" columns={['Version', 'When', 'Who', 'Why', 'Contents', 'Files']} actions={editable}>
              {bundles.data.map((b) => (
                <tr key={b.version}>
                  <td>
                    v{b.version} {b === latest ? <Badge tone="ok">latest</Badge> : null}
                    {b.rollbackOf ? <Badge tone="info">rollback to v{b.rollbackOf}</Badge> : null}
                  </td>
                  <td>{new Date(b.publishedAt).toLocaleString()}</td>
                  <td>
                    {b.publishedBy}
                    {reviewOf.get(b.version) ? (
                      <span className="muted small">
                        {' '}
                        · asked by {requester(reviewOf.get(b.version)!)}, approved by {decider(reviewOf.get(b.version)!)}{' '}
                        <a href={href(`/tenants/${tenant}/reviews/${reviewOf.get(b.version)!.id}`)}>
                          review<span className="sr-only"> of v{b.version}</span>
                        </a>
                      </span>
                    ) : null}
                  </td>
                  <td>{b.reason ?? '—'}</td>
                  <td className="small" title={b.revision}>
                    <Summary v={b} />
                    {b.version > 1 ? (
                      <>
                        {' '}
                        <button
                          type="button"
                          className="link-button"
                          aria-expanded={compare === b.version}
                          onClick={() => setCompare(compare === b.version ? null : b.version)}
                        >
                          {compare === b.version ? 'Hide changes' : 'Changes'}
                          <span className="sr-only"> of v{b.version}</span>
                        </button>
                      </>
                    ) : null}
                  </td>
                  <td className="actions">
                    <button type="button" className="link-button" onClick={() => get(`${base}/${b.version}`, `${tenant}-v${b.version}.bundle.json`)}>
                      bundle.json<span className="sr-only"> of v{b.version}</span>
                    </button>{' '}
                    <button type="button" className="link-button" onClick={() => get(`${base}/${b.version}/signature`, `${tenant}-v${b.version}.bundle.jws`)}>
                      signature<span className="sr-only"> of v{b.version}</span>
                    </button>
                  </td>
                  {editable ? (
                    <td>
                      {b !== latest ? (
                        <button type="button" onClick={() => setRollbackTo(b.version)}>
                          Roll back to v{b.version}
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </DataTable>
          </div>
        ) : null}
        {compare !== null ? <VersionChanges tenant={tenant} version={compare} /> : null}
      </section>

      <Runtimes tenant={tenant} />
      <PromotePanel tenant={tenant} session={session} policyVersion={policy.data?.version} />
    </div>
  );
}

function Summary({ v }: { v: BundleVersion }) {
  const s = v.summary;
  const c = s.changes;
  return (
    <span>
      {s.tools} tools, {s.callable} callable, {s.excluded} excluded · {s.roles} roles, {s.subjects} subjects, {s.grants} grants
      {c.toolsAdded || c.toolsRemoved || c.decisionsChanged ? (
        <span className="muted">
          {' '}
          · +{c.toolsAdded} −{c.toolsRemoved} tools, {c.decisionsChanged} decisions changed
        </span>
      ) : null}
    </span>
  );
}

function VersionChanges({ tenant, version }: { tenant: string; version: number }) {
  const diff = useDiff(tenant, version - 1, version);
  return (
    <section className="card" aria-label={`Changes in v${version}`}>
      <h3>
        Changes from v{version - 1} to v{version}
      </h3>
      {diff.isPending ? <Loading what="diff" /> : null}
      {diff.error ? <Notice error={diff.error} /> : null}
      {diff.data ? <BundleDiffView diff={diff.data} label={`v${version - 1} to v${version}`} /> : null}
    </section>
  );
}

function Runtimes({ tenant }: { tenant: string }) {
  const runtimes = useRuntimes(tenant);
  const ids = useId();
  const items = runtimes.data?.runtimes ?? [];
  const latest = runtimes.data?.latest?.version;
  // Converged means on the latest version and fresh: a stale runtime may report the latest
  // version while it serves a bundle it can no longer refresh (or one that has expired).
  const converged = items.filter((r) => latest !== undefined && r.version === latest && r.health === 'fresh').length;
  const stale = items.filter((r) => r.health === 'stale');
  const expired = stale.filter((r) => r.lastError === 'expired').length;
  const none = items.filter((r) => r.health === 'none').length;
  const behind = items.filter((r) => r.health === 'fresh' && (latest === undefined || r.version !== latest)).length;
  return (
    <section aria-labelledby={`${ids}-rt`}>
      <h2 id={`${ids}-rt`}>Runtimes</h2>
      {runtimes.error ? <Notice error={runtimes.error} /> : null}
      {runtimes.data ? (
        <>
          <p>
            {items.length ? (
              <span role="status" aria-label="Fleet">
                <strong>
                  {converged} of {items.length}
                </strong>{' '}
                runtime(s) run the latest version{latest !== undefined ? ` (v${latest})` : ''} and are fresh.
                {behind ? ` ${behind} run an older version.` : ''}
                {stale.length ? (
                  <>
                    {' '}
                    <Badge tone="warn">{stale.length} stale</Badge> serving their last good bundle
                    {expired ? `, ${expired} of them refusing an expired bundle` : ''}.
                  </>
                ) : null}
                {none ? (
                  <>
                    {' '}
                    <Badge tone="bad">{none} with no good bundle</Badge> denying every call.
                  </>
                ) : null}
              </span>
            ) : (
              <span className="muted">No runtime has reported yet.</span>
            )}
          </p>
          {items.length ? (
            <div className="convergence" aria-hidden="true">
              <div style={{ width: `${(100 * converged) / items.length}%` }} />
              <div className="convergence-stale" style={{ width: `${(100 * stale.length) / items.length}%` }} />
            </div>
          ) : null}
          {items.length ? (
            <div className="table-wrap">
              <DataTable label="Runtimes" columns={['Runtime', 'Version', 'Behind', 'Health', 'Last report', 'Last error', 'Decisions dropped']} compact>
                {items.map((r) => (
                  <tr key={r.runtimeId}>
                    <td className="mono">{r.runtimeId}</td>
                    <td>{r.version != null ? `v${r.version}` : '—'}</td>
                    <td>{r.behind == null ? '—' : r.behind === 0 ? 'up to date' : `${r.behind} behind`}</td>
                    <td>
                      <Badge tone={r.health === 'fresh' ? 'ok' : r.health === 'stale' ? 'warn' : 'bad'}>{r.health}</Badge>
                    </td>
                    <td>{new Date(r.reportedAt).toLocaleString()}</td>
                    <td>
                      {r.lastError ? <code>{r.lastError}</code> : null} {r.detail ?? ''}
                    </td>
                    <td title="Decision records the runtime's ring dropped while it could not ship them, as its last batch reported">
                      {r.decisionsDropped === undefined ? '—' : r.decisionsDropped}
                    </td>
                  </tr>
                ))}
              </DataTable>
            </div>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
