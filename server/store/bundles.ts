import type { BundleSummary, BundleVersion } from '../../policy-schemas/types.gen.ts';
import type { DbOrTx } from '../db/database.ts';
import type { BundlesRow, NewBundlesRow } from '../db/tables/bundles.ts';

/** What a bundle row's `summary` column holds beside the diff summary. */
export type StoredSummary = { summary: BundleSummary; previousRevision: string | null; issuedAt: string; expiresAt: string };

/** Stores a published version: the exact signed bytes and signature, as served from then on. */
export async function insertBundle(db: DbOrTx, row: NewBundlesRow): Promise<void> {
  await db.insertInto('bundles').values(row).execute();
}

/** The version and revision of the tenant's latest bundle: what a publish or a cache compares against. */
export async function latestBundleHead(db: DbOrTx, tenant: string): Promise<{ version: number; revision: string; published_at: string } | undefined> {
  return db
    .selectFrom('bundles')
    .select(['version', 'revision', 'published_at'])
    .where('tenant', '=', tenant)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
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
