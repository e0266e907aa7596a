import type { Bundle, BundleSummary, BundleVersion } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { runChange } from '../audit/change.ts';
import type { ChangeMeta } from '../audit/change.ts';
import type { AppDeps } from '../context.ts';
import type { DbOrTx } from '../db/database.ts';
import type { BundlesRow } from '../db/tables/bundles.ts';
import { publishEvents } from '../distribution/publish-events.ts';
import { ApiError } from '../errors.ts';
import { summarize } from '../policy-engine/diff.ts';
import type { KeyStore } from '../signing/key-store.ts';
import { signBundle } from '../signing/sign.ts';
import { loadDraftSnapshot } from '../store/snapshot.ts';
import { compileBundle, contentRevision } from './compile-bundle.ts';
import type { GateOutcome } from './tests-gate.ts';

export type PublishOutcome = { created: boolean; version: number; revision: string };

/** What the `summary` column holds: the listing's counts plus the envelope, so listing parses no bundle. */
type StoredSummary = { summary: BundleSummary; previousRevision: string | null; issuedAt: string; expiresAt: string };

/**
 * Compiles the tenant's draft (or takes an earlier version's content for a rollback), signs it and
 * stores it as the next version, with one audit event, in one transaction; then wakes long-polling
 * pulls. When the content equals the latest version's, nothing is written and that version is
 * returned, unless `refresh` asks for a new version anyway (same revision, later expiry).
 */
export async function publishBundle(
  deps: Pick<AppDeps, 'database' | 'metrics'>,
  meta: ChangeMeta,
  tenant: string,
  opts: { rollbackTo?: number; refresh?: boolean; reissue?: boolean; now?: Date } & GateOutcome,
  keys: KeyStore,
): Promise<PublishOutcome> {
  const issuedAt = (opts.now ?? new Date()).toISOString();
  const outcome = await runChange(deps, meta, async (ch) => {
    const latest = await latestBundleRow(ch.tx, tenant);
    const version = (latest?.version ?? 0) + 1;
    const previousRevision = latest?.revision ?? null;
    let bundle: Bundle;
    let text: string;
    if (opts.rollbackTo !== undefined || opts.reissue) {
      // A re-issue re-signs the latest content with a later expiry; a rollback takes an earlier one's.
      const row = opts.reissue ? latest : await bundleRow(ch.tx, tenant, opts.rollbackTo!);
      if (!row) {
        throw new ApiError(404, 'not_found', opts.reissue ? `tenant ${tenant} has no published bundle to re-issue` : `bundle version ${opts.rollbackTo} of tenant ${tenant} does not exist`, {
          errors: [{ pointer: opts.reissue ? '' : '/rollbackTo', message: 'no such version' }],
        });
      }
      if (!opts.refresh && !opts.reissue && latest && latest.revision === row.revision) return { created: false, version: latest.version, revision: latest.revision };
      const old = JSON.parse(row.content) as Bundle;
      const expiresAt = new Date(Date.parse(issuedAt) + old.policy.bundleTtlSeconds * 1000).toISOString();
      bundle = { ...old, version, previousRevision, issuedAt, expiresAt };
      if (contentRevision(bundle) !== row.revision) throw new Error(`stored bundle ${tenant}@${row.version} does not hash to its revision`);
      text = canonicalJson(bundle);
    } else {
      const snapshot = await loadDraftSnapshot(ch.tx, tenant);
      if (!snapshot) throw new ApiError(404, 'not_found', `tenant ${tenant} does not exist`);
      const r = compileBundle(snapshot, { version, previousRevision, issuedAt });
      if (!r.ok) throw compileError(tenant, r.errors);
      if (opts.testedRevision !== undefined && r.revision !== opts.testedRevision) throw new ApiError(409, 'conflict', `The draft of ${tenant} changed while its policy tests ran; publish again`);
      if (!opts.refresh && latest && latest.revision === r.revision) return { created: false, version: latest.version, revision: latest.revision };
      bundle = r.bundle;
      text = r.text;
    }
    const key = await keys.signer();
    const signature = await signBundle(Buffer.from(text, 'utf8'), key);
    const summary = await summarize(bundle, latest ? (JSON.parse(latest.content) as Bundle) : null);
    const stored: StoredSummary = { summary, previousRevision, issuedAt: bundle.issuedAt, expiresAt: bundle.expiresAt };
    const rollbackOf = opts.rollbackTo ?? null;
    await ch.tx
      .insertInto('bundles')
      .values({
        tenant,
        version,
        revision: bundle.revision,
        content: text,
        signature,
        kid: key.kid,
        published_by: meta.actor,
        published_at: issuedAt,
        reason: meta.reason,
        summary: JSON.stringify(stored),
        rollback_of: rollbackOf,
      })
      .execute();
    await ch.record({
      action: rollbackOf === null ? 'publish' : 'rollback',
      entityType: 'bundle',
      entityId: String(version),
      tenant,
      before: latest ? { version: latest.version, revision: latest.revision } : null,
      after: { version, revision: bundle.revision, kid: key.kid, ...(rollbackOf === null ? {} : { rollbackOf }), ...(opts.forced ? { forced: opts.forced } : {}), summary },
    });
    return { created: true, version, revision: bundle.revision };
  });
  if (outcome.created) publishEvents.published(tenant, outcome.version);
  return outcome;
}

/** The 422 for a draft that does not compile, listing every error with its pointer. */
export function compileError(tenant: string, errors: { pointer: string; message: string; code: string }[]): ApiError {
  const first = errors[0];
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return new ApiError(422, 'compile_error', `The draft of ${tenant} does not compile: ${first.pointer} ${first.message}${more}`, { errors });
}

/** The tenant's highest published version, if any. */
export async function latestBundleRow(db: DbOrTx, tenant: string): Promise<BundlesRow | undefined> {
  return db.selectFrom('bundles').selectAll().where('tenant', '=', tenant).orderBy('version', 'desc').limit(1).executeTakeFirst();
}

/** When the tenant's latest bundle was issued and expires, read from its summary (not its content). */
export async function latestBundleLifetime(db: DbOrTx, tenant: string): Promise<{ issuedAt: string; expiresAt: string } | undefined> {
  const row = await db.selectFrom('bundles').select('summary').where('tenant', '=', tenant).orderBy('version', 'desc').limit(1).executeTakeFirst();
  if (!row) return undefined;
  const { issuedAt, expiresAt } = JSON.parse(row.summary) as StoredSummary;
  return { issuedAt, expiresAt };
}

/** One published version of a tenant, if it exists. */
export async function bundleRow(db: DbOrTx, tenant: string, version: number): Promise<BundlesRow | undefined> {
  return db.selectFrom('bundles').selectAll().where('tenant', '=', tenant).where('version', '=', version).executeTakeFirst();
}

/** Every published version of a tenant, newest first, as the listing shows it. */
export async function listBundleVersions(db: DbOrTx, tenant: string): Promise<BundleVersion[]> {
  const rows = await db
    .selectFrom('bundles')
    .select(['version', 'revision', 'kid', 'published_by', 'published_at', 'reason', 'summary', 'rollback_of'])
    .where('tenant', '=', tenant)
    .orderBy('version', 'desc')
    .execute();
  return rows.map((r) => {
    const s = JSON.parse(r.summary) as StoredSummary;
    return {
      version: r.version,
      revision: r.revision,
      previousRevision: s.previousRevision,
      issuedAt: s.issuedAt,
      expiresAt: s.expiresAt,
      kid: r.kid,
      publishedBy: r.published_by,
      publishedAt: r.published_at,
      reason: r.reason,
      rollbackOf: r.rollback_of,
      summary: s.summary,
    };
  });
}
