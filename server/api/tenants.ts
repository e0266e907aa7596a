import { type Context, Hono } from 'hono';
import type { ConnectionGrant, Tenant, TenantPolicy } from '../../policy-schemas/types.gen.ts';
import { withChange } from '../audit/change.ts';
import { unscopeTokens } from '../auth/tokens.ts';
import { actorOf, authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import type { DbOrTx } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { dropReadOnly, readJson, takeReason, validOrThrow } from '../http/body.ts';
import { changedMeanwhile, checkVersion, etagOf, requiredIfMatch } from '../http/versioning.ts';
import { getPolicyTests } from '../store/policy-tests.ts';
import * as store from '../store/tenants.ts';
import { judgeTenantChange } from '../validation/references.ts';
import { actorMay } from '../auth/permissions.ts';
import { reviewWeakened } from '../review/publish-requests.ts';
import { findSecrets } from '../validation/secrets.ts';
import { documentRoutes, throwProblems } from './document-routes.ts';

/** `/v1/tenants` and each tenant's policy (its connection grants: grantRoutes). */
export const tenantRoutes = new Hono<AppEnv>();

const now = () => new Date().toISOString();
const asObject = (body: unknown) => (body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined);

async function requireTenant(db: DbOrTx, id: string) {
  const t = await store.getTenant(db, id);
  if (!t) throw new ApiError(404, 'not_found', `tenant ${id} does not exist`);
  return t;
}

const policyDoc = (p: store.PolicyRecord): TenantPolicy => store.tenantDocument<TenantPolicy>(p);

tenantRoutes.get('/', async (c) => {
  authorize(c, 'tenant', 'read');
  return c.json({ items: await store.listTenants(c.get('deps').database.db, actorOf(c).tenants) });
});

tenantRoutes.post('/', async (c) => {
  authorize(c, 'tenant', 'write');
  const body = await readJson(c);
  const reason = takeReason(c, asObject(body));
  if (asObject(body)) dropReadOnly(asObject(body)!);
  const t = validOrThrow<Tenant>('tenant', body);
  const policy = t.policy ?? validOrThrow<TenantPolicy>('tenant-policy', store.emptyPolicy());
  const created = await withChange(c, reason, async (ch) => {
    if (await store.getTenant(ch.tx, t.id))
      throw new ApiError(409, 'conflict', `tenant ${t.id} already exists`, { errors: [{ pointer: '/id', message: 'already exists' }] });
    throwProblems((await judgeTenantChange(ch.tx, t.id, { policy })).own.map((p) => ({ ...p, pointer: `/policy${p.pointer}` })));
    const rec = await store.insertTenant(ch.tx, t, policy, now());
    await ch.record({ action: 'create', entityType: 'tenant', entityId: t.id, tenant: t.id, before: null, after: { id: t.id, name: t.name, policy } });
    return rec;
  });
  c.header('ETag', etagOf(created.version));
  c.header('Location', `/v1/tenants/${created.id}`);
  return c.json(created, 201);
});

tenantRoutes.get('/:tenant', async (c) => {
  const id = c.req.param('tenant');
  authorize(c, 'tenant', 'read', id);
  const t = await requireTenant(c.get('deps').database.db, id);
  c.header('ETag', etagOf(t.version));
  return c.json(t);
});

const replaceTenant = async (c: Context<AppEnv>, mode: 'put' | 'patch') => {
  const id = c.req.param('tenant') as string;
  authorize(c, 'tenant', 'write', id);
  const expected = requiredIfMatch(c);
  const body = await readJson(c);
  const reason = takeReason(c, asObject(body));
  const updated = await withChange(c, reason, async (ch) => {
    const existing = await requireTenant(ch.tx, id);
    checkVersion(expected, existing);
    const merged = mode === 'patch' && asObject(body) ? { id, name: existing.name, ...asObject(body) } : body;
    if (asObject(merged)) dropReadOnly(asObject(merged)!);
    const t = validOrThrow<Tenant>('tenant', merged);
    if (t.id !== id)
      throw new ApiError(400, 'validation', `The body names tenant ${t.id} but the URL names ${id}`, {
        errors: [{ pointer: '/id', message: `must be ${id}` }],
      });
    if (t.policy)
      throw new ApiError(400, 'validation', `Edit the policy at /v1/tenants/${id}/policy`, {
        errors: [{ pointer: '/policy', message: 'is edited at /v1/tenants/:tenant/policy' }],
      });
    if (!(await store.updateTenant(ch.tx, id, t.name, existing.version, now()))) throw changedMeanwhile(`tenant ${id}`, await store.getTenant(ch.tx, id));
    await ch.record({ action: 'update', entityType: 'tenant', entityId: id, tenant: id, before: { id, name: existing.name }, after: { id, name: t.name } });
    return (await store.getTenant(ch.tx, id))!;
  });
  c.header('ETag', etagOf(updated.version));
  return c.json(updated);
};
tenantRoutes.put('/:tenant', (c) => replaceTenant(c, 'put'));
tenantRoutes.patch('/:tenant', (c) => replaceTenant(c, 'patch'));

tenantRoutes.delete('/:tenant', async (c) => {
  const id = c.req.param('tenant');
  authorize(c, 'tenant', 'write', id);
  const expected = requiredIfMatch(c);
  const reason = takeReason(c);
  await withChange(c, reason, async (ch) => {
    const existing = await requireTenant(ch.tx, id);
    checkVersion(expected, existing);
    const policy = await store.getPolicy(ch.tx, id);
    const tests = await getPolicyTests(ch.tx, id);
    if (!(await store.deleteTenant(ch.tx, id, existing.version))) throw changedMeanwhile(`tenant ${id}`, await store.getTenant(ch.tx, id));
    await ch.record({
      action: 'delete',
      entityType: 'tenant',
      entityId: id,
      tenant: id,
      before: { id, name: existing.name, policy: policy && policyDoc(policy), tests: tests?.tests ?? [] },
      after: null,
    });
    await unscopeTokens(ch, id);
  });
  // After the commit, on every replica: nothing cached for the old tenant (bundles, tokens scoped
  // to it) may be served to a new one of the same id.
  c.get('deps').cluster.announce({ type: 'tenant-removed', tenant: id });
  return c.body(null, 204);
});

// ---- policy

tenantRoutes.get('/:tenant/policy', async (c) => {
  const id = c.req.param('tenant');
  authorize(c, 'policy', 'read', id);
  const db = c.get('deps').database.db;
  await requireTenant(db, id);
  const p = (await store.getPolicy(db, id))!;
  c.header('ETag', etagOf(p.version));
  return c.json(p);
});

tenantRoutes.put('/:tenant/policy', async (c) => {
  const id = c.req.param('tenant');
  authorize(c, 'policy', 'write', id);
  const expected = requiredIfMatch(c);
  const body = await readJson(c);
  const reason = takeReason(c, asObject(body));
  if (asObject(body)) dropReadOnly(asObject(body)!, ['tenant']);
  const policy = validOrThrow<TenantPolicy>('tenant-policy', body);
  const updated = await withChange(c, reason, async (ch) => {
    await requireTenant(ch.tx, id);
    const existing = (await store.getPolicy(ch.tx, id))!;
    checkVersion(expected, existing);
    if (reviewWeakened(policyDoc(existing), policy) && !actorMay(c.get('deps').authorizer, actorOf(c), 'bundle', 'force', id)) {
      throw new ApiError(403, 'forbidden', `Only an admin may stop requiring a second person to review the publishes of ${id}`, {
        errors: [{ pointer: '/review', message: "turning the review rule off is an admin's change" }],
      });
    }
    const judged = await judgeTenantChange(ch.tx, id, { policy });
    throwProblems(judged.own);
    // A policy that drops a role or subject a grant still names would stop the tenant compiling.
    throwProblems(judged.others, 409);
    if (!(await store.updatePolicy(ch.tx, id, policy, existing.version, now())))
      throw changedMeanwhile(`the policy of ${id}`, await store.getPolicy(ch.tx, id));
    await ch.record({ action: 'update', entityType: 'policy', entityId: id, tenant: id, before: policyDoc(existing), after: policy });
    return (await store.getPolicy(ch.tx, id))!;
  });
  c.header('ETag', etagOf(updated.version));
  return c.json(updated);
});

// ---- grants

/**
 * `/v1/tenants/:tenant/grants`: the tenant's connection grants, through the same document routes as
 * the inventory (no merge patch). Credentials in a body are refused before anything else.
 */
export const grantRoutes = documentRoutes<ConnectionGrant>({
  kind: 'connection-grant',
  entityType: 'grant',
  resource: 'grant',
  store: store.grantStore,
  tenantScoped: true,
  patch: false,
  screen: findSecrets,
  check: async (tx, grant, _existing, c) => (await judgeTenantChange(tx, c.req.param('tenant') as string, { grant })).own,
});
