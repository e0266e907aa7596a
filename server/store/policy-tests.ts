import type { PolicyTest } from '../../policy-schemas/types.gen.ts';
import type { DbOrTx } from '../db/database.ts';

/** A tenant's policy tests as the API shows them: the document plus tenant, version and timestamps. */
export type PolicyTestsRecord = { tests: PolicyTest[]; tenant: string; version: number; createdAt: string; updatedAt: string };

/** The tenant's tests; undefined only when the tenant does not exist (every tenant has a row). */
export async function getPolicyTests(db: DbOrTx, tenant: string): Promise<PolicyTestsRecord | undefined> {
  const r = await db.selectFrom('tenant_tests').selectAll().where('tenant', '=', tenant).executeTakeFirst();
  return r && { tests: (JSON.parse(r.body) as { tests: PolicyTest[] }).tests, tenant, version: r.version, createdAt: r.created_at, updatedAt: r.updated_at };
}

/** Replaces the tests if they are still at `version`; false when they are not. */
export async function updatePolicyTests(db: DbOrTx, tenant: string, tests: PolicyTest[], version: number, now: string): Promise<boolean> {
  const r = await db
    .updateTable('tenant_tests')
    .set({ body: JSON.stringify({ tests }), version: version + 1, updated_at: now })
    .where('tenant', '=', tenant)
    .where('version', '=', version)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
