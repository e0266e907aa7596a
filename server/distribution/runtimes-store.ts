import type { Runtime, RuntimeStatus } from '../../policy-schemas/types.gen.ts';
import type { DbOrTx } from '../db/database.ts';
import type { RuntimesRow } from '../db/tables/runtimes.ts';

/** Records a runtime's latest report, replacing its previous one. */
export async function recordRuntimeStatus(db: DbOrTx, tenant: string, s: RuntimeStatus, at: string): Promise<void> {
  const row = {
    version: s.version,
    revision: s.revision ?? null,
    health: s.health,
    last_error: s.lastError ?? null,
    detail: s.detail ?? null,
    reported_at: at,
  };
  await db
    .insertInto('runtimes')
    .values({ tenant, runtime_id: s.runtimeId, ...row })
    .onConflict((oc) => oc.columns(['tenant', 'runtime_id']).doUpdateSet(row))
    .execute();
}

/** Keeps only the `keep` most recently heard runtimes of a tenant. */
export async function pruneRuntimes(db: DbOrTx, tenant: string, keep: number): Promise<void> {
  const cutoff = await db
    .selectFrom('runtimes')
    .select(['reported_at', 'runtime_id'])
    .where('tenant', '=', tenant)
    .orderBy('reported_at', 'desc')
    .orderBy('runtime_id')
    .offset(keep)
    .limit(1)
    .executeTakeFirst();
  if (!cutoff) return;
  await db
    .deleteFrom('runtimes')
    .where('tenant', '=', tenant)
    .where((eb) =>
      eb.or([eb('reported_at', '<', cutoff.reported_at), eb.and([eb('reported_at', '=', cutoff.reported_at), eb('runtime_id', '>=', cutoff.runtime_id)])]),
    )
    .execute();
}

/** Every runtime of a tenant, most recently heard from first, with how far behind `latestVersion` it is. */
export async function listRuntimes(db: DbOrTx, tenant: string, latestVersion: number | null): Promise<Runtime[]> {
  const rows = await db.selectFrom('runtimes').selectAll().where('tenant', '=', tenant).orderBy('reported_at', 'desc').orderBy('runtime_id').execute();
  return rows.map((r) => toRuntime(r, latestVersion));
}

function toRuntime(r: RuntimesRow, latestVersion: number | null): Runtime {
  return {
    tenant: r.tenant,
    runtimeId: r.runtime_id,
    version: r.version,
    revision: r.revision,
    health: r.health as Runtime['health'],
    lastError: (r.last_error ?? null) as Runtime['lastError'],
    detail: r.detail,
    reportedAt: r.reported_at,
    behind: latestVersion === null || r.version === null ? null : Math.max(0, latestVersion - r.version),
  };
}
