import { randomUUID } from 'node:crypto';
import type { Bundle, BundleDiff, ImpactReport, PolicyTestFailure, PolicyTestOutcome, PublishRequest } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { type Change, type ChangeDeps, type ChangeMeta, runChange } from '../audit/change.ts';
import type { Compiler } from '../compiler/compiler.ts';
import type { CompiledDraft } from '../compiler/draft.ts';
import type { AppDeps } from '../context.ts';
import type { DbOrTx } from '../db/database.ts';
import type { PublishRequestsRow } from '../db/tables/publish-requests.ts';
import { DEFAULT_IMPACT_DAYS, analyzeImpact } from '../decisions/impact.ts';
import type { ImpactSlots } from '../decisions/impact-slots.ts';
import { ApiError } from '../errors.ts';
import { diffBundles } from '../policy-engine/diff.ts';
import { bundleRow, latestBundleHead, latestBundleRow } from '../store/bundles.ts';
import { getPolicyTests } from '../store/policy-tests.ts';
import { loadDraftSnapshot } from '../store/snapshot.ts';
import { emptyPolicy, getPolicy, tenantDocument } from '../store/tenants.ts';
import type { TenantPolicy } from '../../policy-schemas/types.gen.ts';

/** What a reviewer sees beside the request: stored with it, so the review shows what was asked. */
type ReviewMaterial = { diff: BundleDiff; impact: ImpactReport | null; tests: PolicyTestOutcome[] };

/** True when the tenant's saved policy asks for a second person before a publish ships. */
export async function reviewRequired(db: DbOrTx, tenant: string): Promise<boolean> {
  const rec = await getPolicy(db, tenant);
  return rec ? tenantDocument<TenantPolicy>(rec).review?.publish === 'required' : false;
}

/**
 * Whether `after` asks less of a publish than `before` (review required before, not after): the
 * rule guards publishing, so weakening it is an admin's change, as cutting a policy test is.
 */
export function reviewWeakened(before: TenantPolicy | undefined, after: TenantPolicy): boolean {
  return before?.review?.publish === 'required' && after.review?.publish !== 'required';
}

/** What a publish would ship: the draft compiled, or the content of the version a rollback names. */
export type PublishTarget = { revision: string; bundle: Bundle; content: string | null; rollbackTo?: number; compiled?: CompiledDraft };

/**
 * The content a publish (or rollback) would ship, with its revision; 404 for a version that does not
 * exist. `tested`: the draft as the policy-test gate read and compiled it, taken as it is, so the
 * request names exactly the content its tests (and an admin's force) judged, and the draft is not
 * read again.
 */
export async function publishTarget(
  compiler: Compiler,
  db: DbOrTx,
  tenant: string,
  rollbackTo: number | undefined,
  tested?: CompiledDraft,
): Promise<PublishTarget> {
  if (rollbackTo !== undefined) {
    const row = await bundleRow(db, tenant, rollbackTo);
    if (!row) {
      throw new ApiError(404, 'not_found', `bundle version ${rollbackTo} of tenant ${tenant} does not exist`, {
        errors: [{ pointer: '/rollbackTo', message: 'no such version' }],
      });
    }
    return { revision: row.revision, bundle: JSON.parse(row.content) as Bundle, content: null, rollbackTo };
  }
  const compiled = tested ?? (await compiler.compileDraft(db, tenant));
  // The compiled text is the bundle's canonical JSON already.
  return { revision: compiled.revision, bundle: compiled.bundle, content: compiled.text, compiled };
}

/**
 * Opens a publish request for `target` (or answers the pending one that already names exactly it),
 * with the diff against the latest version, the impact on logged traffic and the policy tests.
 */
export async function openPublishRequest(
  deps: ChangeDeps & Pick<AppDeps, 'impactSlots' | 'compiler'>,
  meta: ChangeMeta,
  tenant: string,
  target: PublishTarget,
  forced: { failures: PolicyTestFailure[] } | undefined,
  requesterLabel: string | null,
): Promise<PublishRequest> {
  const db = deps.database.db;
  const same = await db
    .selectFrom('publish_requests')
    .selectAll()
    .where('tenant', '=', tenant)
    .where('status', '=', 'pending')
    .where('revision', '=', target.revision)
    .orderBy('requested_at', 'desc')
    .executeTakeFirst();
  if (same && (same.rollback_to ?? undefined) === target.rollbackTo) return toPublishRequest(same, false);
  // Diff, tests and impact are computed before the write transaction, which then only inserts.
  const latest = await latestBundleRow(db, tenant);
  const material = await reviewMaterial(
    deps.compiler,
    db,
    deps.impactSlots,
    tenant,
    target,
    latest ? { version: latest.version, bundle: JSON.parse(latest.content) as Bundle } : null,
  );
  return runChange(deps, meta, async (ch) => {
    if (((await latestBundleHead(ch.tx, tenant))?.version ?? null) !== (latest?.version ?? null)) {
      throw new ApiError(409, 'conflict', `A version of ${tenant} was published while the request was prepared; publish again`);
    }
    return insertRequest(ch, tenant, target, forced, latest?.version ?? null, material, requesterLabel);
  });
}

async function insertRequest(
  ch: Change,
  tenant: string,
  target: PublishTarget,
  forced: { failures: PolicyTestFailure[] } | undefined,
  basedOn: number | null,
  material: ReviewMaterial,
  requesterLabel: string | null,
): Promise<PublishRequest> {
  const row: PublishRequestsRow = {
    id: randomUUID(),
    tenant,
    status: 'pending',
    revision: target.revision,
    rollback_to: target.rollbackTo ?? null,
    based_on: basedOn,
    content: target.content,
    review: canonicalJson(material),
    forced: forced ? canonicalJson(forced.failures) : null,
    requested_by: ch.meta.actor,
    requested_by_email: ch.meta.person?.email ?? null,
    requested_by_label: requesterLabel,
    requested_at: new Date().toISOString(),
    reason: ch.meta.reason ?? '',
    decided_by: null,
    decided_by_email: null,
    decided_by_label: null,
    decided_at: null,
    decision_reason: null,
    published_version: null,
  };
  await ch.tx.insertInto('publish_requests').values(row).execute();
  const request = toPublishRequest(row, false);
  await ch.record({
    action: 'request',
    entityType: 'publish-request',
    entityId: row.id,
    tenant,
    before: null,
    after: { revision: row.revision, basedOn: row.based_on, ...(row.rollback_to ? { rollbackTo: row.rollback_to } : {}), ...(forced ? { forced } : {}) },
  });
  return request;
}

async function reviewMaterial(
  compiler: Compiler,
  db: DbOrTx,
  impactSlots: ImpactSlots,
  tenant: string,
  target: PublishTarget,
  latest: { version: number; bundle: Bundle } | null,
): Promise<ReviewMaterial> {
  const from = latest ?? { version: 0, bundle: await emptyTenantBundle(compiler, db, tenant, target.bundle) };
  const diff = await diffBundles(from, { version: target.rollbackTo ?? 'draft', bundle: target.bundle }, { casbin: true });
  const loaded = target.compiled ? await target.compiled.loaded() : loadBundle(target.bundle);
  const tests = await compiler.testOutcomes(
    target.compiled ?? { revision: target.revision, text: canonicalJson(target.bundle) },
    (await getPolicyTests(db, tenant))?.tests ?? [],
  );
  // Impact replays logged traffic; when the server is already busy replaying, the request goes
  // without it rather than waiting (the reviewer still sees the diff and the tests).
  let impact: ImpactReport | null = null;
  const release = impactSlots.take();
  if (release) {
    try {
      const to = new Date();
      const fromAt = new Date(to.getTime() - DEFAULT_IMPACT_DAYS * 86400_000);
      impact = await analyzeImpact(db, tenant, loaded, { from: fromAt.toISOString(), to: to.toISOString(), examples: 3 });
    } finally {
      release();
    }
  }
  return { diff, impact, tests };
}

/** Before a tenant's first publish the diff starts from the same inventory under an empty policy. */
async function emptyTenantBundle(compiler: Compiler, db: DbOrTx, tenant: string, like: Bundle): Promise<Bundle> {
  const snapshot = await loadDraftSnapshot(db, tenant);
  if (!snapshot) throw new ApiError(404, 'not_found', `tenant ${tenant} does not exist`);
  const r = await compiler.compiledOrErrors({ ...snapshot, policy: emptyPolicy(), grants: [] });
  if ('errors' in r) return like;
  // The diff compares content, never the envelope: the compiler's version-1 envelope is as good as any.
  return r.bundle;
}

/** The stored row as the API answers it; `stale` says whether the draft still compiles to the revision. */
export function toPublishRequest(r: PublishRequestsRow, stale: boolean): PublishRequest {
  const material = JSON.parse(r.review) as ReviewMaterial;
  return {
    id: r.id,
    tenant: r.tenant,
    status: r.status as PublishRequest['status'],
    revision: r.revision,
    ...(r.rollback_to !== null ? { rollbackTo: r.rollback_to } : {}),
    basedOn: r.based_on,
    requestedBy: r.requested_by,
    requestedByEmail: r.requested_by_email,
    requestedByLabel: r.requested_by_label,
    requestedAt: r.requested_at,
    reason: r.reason,
    stale: r.status === 'pending' && stale,
    ...(r.forced ? { forced: true } : {}),
    diff: material.diff,
    impact: material.impact,
    tests: material.tests,
    ...(r.decided_by !== null ? { decidedBy: r.decided_by, decidedByEmail: r.decided_by_email, decidedByLabel: r.decided_by_label } : {}),
    ...(r.decided_at !== null ? { decidedAt: r.decided_at } : {}),
    ...(r.decision_reason !== null ? { decisionReason: r.decision_reason } : {}),
    ...(r.published_version !== null ? { publishedVersion: r.published_version } : {}),
  };
}

/** The tenant's requests, newest first (at most 200), optionally of one status. */
export async function listPublishRequests(db: DbOrTx, tenant: string, status?: string): Promise<PublishRequestsRow[]> {
  let q = db.selectFrom('publish_requests').selectAll().where('tenant', '=', tenant);
  if (status) q = q.where('status', '=', status);
  return q.orderBy('requested_at', 'desc').limit(200).execute();
}

export async function getPublishRequest(db: DbOrTx, tenant: string, id: string): Promise<PublishRequestsRow | undefined> {
  return db.selectFrom('publish_requests').selectAll().where('tenant', '=', tenant).where('id', '=', id).executeTakeFirst();
}

/**
 * Whether a pending request no longer matches the draft: a draft request whose draft compiles to
 * another revision now (or no longer compiles). A rollback's content is a stored version: never stale.
 */
export async function isStale(r: PublishRequestsRow, draftRevision: () => Promise<string | null>): Promise<boolean> {
  if (r.status !== 'pending' || r.rollback_to !== null) return false;
  return (await draftRevision()) !== r.revision;
}

/** The draft's revision now, or null when it does not compile. */
export async function currentDraftRevision(compiler: Compiler, db: DbOrTx, tenant: string): Promise<string | null> {
  try {
    return (await compiler.compileDraft(db, tenant)).revision;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'compile_error') return null;
    throw err;
  }
}

/**
 * The names that identify who acts: the audit actor (`user:<sub>` for a person, `token:<id>` for
 * a token), and for a person also their verified email, so one person signed in through two
 * mappings or providers is still one person. Labels and roles never count.
 */
export function identitiesOf(actor: string, email: string | null | undefined): Set<string> {
  const out = new Set([actor]);
  if (actor.startsWith('user:') && email) out.add(`email:${email.toLowerCase()}`);
  return out;
}

/** Records a reviewer's decision on a pending request (inside the change that publishes or rejects it). */
export async function decidePublishRequest(
  ch: Change,
  r: PublishRequestsRow,
  decision: { status: 'published' | 'rejected'; version?: number; reason: string | null; label: string | null },
): Promise<PublishRequestsRow> {
  const decidedAt = new Date().toISOString();
  const updated = await ch.tx
    .updateTable('publish_requests')
    .set({
      status: decision.status,
      decided_by: ch.meta.actor,
      decided_by_email: ch.meta.person?.email ?? null,
      decided_by_label: decision.label,
      decided_at: decidedAt,
      decision_reason: decision.reason,
      published_version: decision.version ?? null,
    })
    .where('id', '=', r.id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) throw new ApiError(409, 'conflict', `publish request ${r.id} was decided by someone else meanwhile`);
  await ch.record({
    action: decision.status === 'published' ? 'approve' : 'reject',
    entityType: 'publish-request',
    entityId: r.id,
    tenant: r.tenant,
    before: { status: 'pending', requestedBy: r.requested_by, revision: r.revision },
    after: { status: decision.status, ...(decision.version !== undefined ? { publishedVersion: decision.version } : {}) },
    reason: decision.reason,
  });
  return (await getPublishRequest(ch.tx, r.tenant, r.id))!;
}
