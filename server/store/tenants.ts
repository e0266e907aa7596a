import type { ConnectionGrant, Tenant, TenantPolicy } from '../../policy-schemas/types.gen.ts';
import type { DbOrTx } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import type { DocumentRepository, Stored } from './document-store.ts';

export type TenantRecord = Stored<Pick<Tenant, 'id' | 'name'>>;
export type PolicyRecord = Stored<TenantPolicy> & { tenant: string };
export type GrantRecord = Stored<ConnectionGrant> & { tenant: string };

/** A policy or grant without what the store adds (tenant, version, timestamps): the document as written. */
export function tenantDocument<T extends object>(r: Stored<T> & { tenant: string }): T {
  const { tenant: _t, version: _v, createdAt: _c, updatedAt: _u, ...doc } = r;
  return doc as unknown as T;
}

/** The policy a tenant starts with: nobody may call anything (deny by default). */
export function emptyPolicy(): TenantPolicy {
  return { roles: {}, bindings: {}, profiles: {}, bundleTtlSeconds: 86400 };
}

export async function listTenants(db: DbOrTx, only: string[] | null): Promise<TenantRecord[]> {
  let q = db.selectFrom('tenants').selectAll().orderBy('id');
  if (only) q = only.length ? q.where('id', 'in', only) : q.where('id', '=', '\u0000none');
  return (await q.execute()).map((r) => ({ id: r.id, name: r.name, version: r.version, createdAt: r.created_at, updatedAt: r.updated_at }));
}

/** Whether a tenant exists: the one place that asks (routes answer 404 through requireTenantExists). */
export async function tenantExists(db: DbOrTx, id: string): Promise<boolean> {
  return (await db.selectFrom('tenants').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Which of these tenant ids exist. */
export async function existingTenantIds(db: DbOrTx, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set((await db.selectFrom('tenants').select('id').where('id', 'in', ids).execute()).map((r) => r.id));
}

/** Throws the API's 404 for a tenant that does not exist. */
export async function requireTenantExists(db: DbOrTx, id: string): Promise<void> {
  if (!(await tenantExists(db, id))) throw new ApiError(404, 'not_found', `tenant ${id} does not exist`);
}

export async function getTenant(db: DbOrTx, id: string): Promise<TenantRecord | undefined> {
  const r = await db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
  return r && { id: r.id, name: r.name, version: r.version, createdAt: r.created_at, updatedAt: r.updated_at };
}

export async function insertTenant(db: DbOrTx, t: { id: string; name: string }, policy: TenantPolicy, now: string): Promise<TenantRecord> {
  await db.insertInto('tenants').values({ id: t.id, name: t.name, version: 1, created_at: now, updated_at: now }).execute();
  await db
    .insertInto('tenant_policies')
    .values({ tenant: t.id, body: JSON.stringify(policy), version: 1, updated_at: now })
    .execute();
  await db
    .insertInto('tenant_tests')
    .values({ tenant: t.id, body: JSON.stringify({ tests: [] }), version: 1, created_at: now, updated_at: now })
    .execute();
  return { id: t.id, name: t.name, version: 1, createdAt: now, updatedAt: now };
}

export async function updateTenant(db: DbOrTx, id: string, name: string, version: number, now: string): Promise<boolean> {
  const r = await db
    .updateTable('tenants')
    .set({ name, version: version + 1, updated_at: now })
    .where('id', '=', id)
    .where('version', '=', version)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function deleteTenant(db: DbOrTx, id: string, version: number): Promise<boolean> {
  const r = await db.deleteFrom('tenants').where('id', '=', id).where('version', '=', version).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

export async function getPolicy(db: DbOrTx, tenant: string): Promise<PolicyRecord | undefined> {
  const r = await db.selectFrom('tenant_policies').selectAll().where('tenant', '=', tenant).executeTakeFirst();
  return r && { ...(JSON.parse(r.body) as TenantPolicy), tenant, version: r.version, createdAt: r.updated_at, updatedAt: r.updated_at };
}

export async function updatePolicy(db: DbOrTx, tenant: string, policy: TenantPolicy, version: number, now: string): Promise<boolean> {
  const r = await db
    .updateTable('tenant_policies')
    .set({ body: JSON.stringify(policy), version: version + 1, updated_at: now })
    .where('tenant', '=', tenant)
    .where('version', '=', version)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

const toGrant = (r: { tenant: string; body: string; version: number; created_at: string; updated_at: string }): GrantRecord => ({
  ...(JSON.parse(r.body) as ConnectionGrant),
  tenant: r.tenant,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function listGrants(db: DbOrTx, tenant: string): Promise<GrantRecord[]> {
  return (await db.selectFrom('grants').selectAll().where('tenant', '=', tenant).orderBy('connection_id').execute()).map(toGrant);
}

export async function getGrant(db: DbOrTx, tenant: string, connectionId: string): Promise<GrantRecord | undefined> {
  const r = await db.selectFrom('grants').selectAll().where('tenant', '=', tenant).where('connection_id', '=', connectionId).executeTakeFirst();
  return r && toGrant(r);
}

export async function insertGrant(db: DbOrTx, tenant: string, g: ConnectionGrant, now: string): Promise<GrantRecord> {
  await db
    .insertInto('grants')
    .values({ tenant, connection_id: g.connectionId, body: JSON.stringify(g), version: 1, created_at: now, updated_at: now })
    .execute();
  return { ...g, tenant, version: 1, createdAt: now, updatedAt: now };
}

export async function updateGrant(db: DbOrTx, tenant: string, g: ConnectionGrant, version: number, now: string): Promise<boolean> {
  const r = await db
    .updateTable('grants')
    .set({ body: JSON.stringify(g), version: version + 1, updated_at: now })
    .where('tenant', '=', tenant)
    .where('connection_id', '=', g.connectionId)
    .where('version', '=', version)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function deleteGrant(db: DbOrTx, tenant: string, connectionId: string, version: number): Promise<boolean> {
  const r = await db
    .deleteFrom('grants')
    .where('tenant', '=', tenant)
    .where('connection_id', '=', connectionId)
    .where('version', '=', version)
    .executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** Grants as the document routes see them: documents keyed by connectionId within a tenant. */
export const grantStore: DocumentRepository<ConnectionGrant> = {
  key: 'connectionId',
  list: (db, tenant) => listGrants(db, scoped(tenant)),
  get: (db, connectionId, tenant) => getGrant(db, scoped(tenant), connectionId),
  insert: (db, _connectionId, grant, now, tenant) => insertGrant(db, scoped(tenant), grant, now),
  async update(db, connectionId, grant, version, _createdAt, now, tenant) {
    if (!(await updateGrant(db, scoped(tenant), grant, version, now))) return undefined;
    return getGrant(db, scoped(tenant), connectionId);
  },
  remove: (db, connectionId, version, tenant) => deleteGrant(db, scoped(tenant), connectionId, version),
};

function scoped(tenant: string | undefined): string {
  if (tenant === undefined) throw new Error('grants live in a tenant: a tenant is required');
  return tenant;
}
