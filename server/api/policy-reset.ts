import { Hono } from 'hono';
import { validate } from '../../policy-schemas/index.ts';
import type { Bundle, ConnectionGrant, PolicyReset, TenantPolicy } from '../../policy-schemas/types.gen.ts';
import { withChange } from '../audit/change.ts';
import { authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import { bundleRow } from '../store/bundles.ts';
import { ApiError } from '../errors.ts';
import { readJson, takeReason, validOrThrow } from '../http/body.ts';
import { changedMeanwhile, checkVersion, etagOf, requiredIfMatch } from '../http/versioning.ts';
import * as store from '../store/tenants.ts';
import { judgeTenantChange } from '../validation/references.ts';
import { throwProblems } from './document-routes.ts';

/**
 * `POST /v1/tenants/:tenant/policy/reset { version }`: the draft policy and grants become what a
 * published version carried, in one audited transaction. Mounted under `/v1/tenants`.
 */
export const policyResetRoutes = new Hono<AppEnv>();

policyResetRoutes.post('/:tenant/policy/reset', async (c) => {
  const id = c.req.param('tenant');
  authorize(c, 'policy', 'write', id);
  authorize(c, 'grant', 'write', id);
  const expected = requiredIfMatch(c);
  const body = await readJson(c);
  const reason = takeReason(c, body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined);
  const { version } = validOrThrow<PolicyReset>('policy-reset', body);
  const now = new Date().toISOString();
  const updated = await withChange(c, reason, async (ch) => {
    await store.requireTenantExists(ch.tx, id);
    const row = await bundleRow(ch.tx, id, version);
    if (!row)
      throw new ApiError(404, 'not_found', `bundle version ${version} of tenant ${id} does not exist`, {
        errors: [{ pointer: '/version', message: 'no such version' }],
      });
    const existing = (await store.getPolicy(ch.tx, id))!;
    checkVersion(expected, existing);
    const { grants, ...published } = (JSON.parse(row.content) as Bundle).policy;
    // A version published before grant ids were narrowed may hold one that no URL can name.
    throwProblems(
      (grants ?? []).flatMap((g, i) =>
        validate('common#/$defs/grantConnectionId', g.connectionId).ok
          ? []
          : [{ pointer: `/grants/${i}/connectionId`, message: `${JSON.stringify(g.connectionId)} cannot be a grant id any more (as v${version} had it)` }],
      ),
    );
    // The review rule is not part of a bundle: the tenant keeps the one it has.
    const { review } = store.tenantDocument<TenantPolicy>(existing);
    const policy = validOrThrow<TenantPolicy>('tenant-policy', { ...structuredClone(published), ...(review ? { review } : {}) });
    if (!(await store.updatePolicy(ch.tx, id, policy, existing.version, now))) throw changedMeanwhile(`the policy of ${id}`, await store.getPolicy(ch.tx, id));
    await ch.record({ action: 'update', entityType: 'policy', entityId: id, tenant: id, before: store.tenantDocument<TenantPolicy>(existing), after: policy });

    const current = new Map((await store.listGrants(ch.tx, id)).map((g) => [g.connectionId, g]));
    for (const g of grants ?? []) {
      const old = current.get(g.connectionId);
      current.delete(g.connectionId);
      const grant: ConnectionGrant = {
        connectionId: g.connectionId,
        label: old?.label ?? '',
        subjects: g.subjects as ConnectionGrant['subjects'],
        tools: g.tools as ConnectionGrant['tools'],
        ...(g.expiresAt ? { expiresAt: g.expiresAt } : {}),
      };
      const before = old ? store.tenantDocument<ConnectionGrant>(old) : null;
      if (before && JSON.stringify({ ...before, label: grant.label }) === JSON.stringify(grant)) continue;
      if (old) await store.updateGrant(ch.tx, id, grant, old.version, now);
      else await store.insertGrant(ch.tx, id, grant, now);
      await ch.record({ action: old ? 'update' : 'create', entityType: 'grant', entityId: g.connectionId, tenant: id, before, after: grant });
    }
    for (const old of current.values()) {
      await store.deleteGrant(ch.tx, id, old.connectionId, old.version);
      await ch.record({
        action: 'delete',
        entityType: 'grant',
        entityId: old.connectionId,
        tenant: id,
        before: store.tenantDocument<ConnectionGrant>(old),
        after: null,
      });
    }
    // Judged as it now stands, policy and grants together: tools or groups deleted since that version
    // make it unsaveable, and then the whole reset is refused (the transaction writes nothing).
    const problems = [...(await judgeTenantChange(ch.tx, id, { policy })).own];
    for (const g of await store.listGrants(ch.tx, id))
      problems.push(...(await judgeTenantChange(ch.tx, id, { grant: store.tenantDocument<ConnectionGrant>(g) })).own);
    throwProblems(problems.map((p) => ({ ...p, message: `${p.message} (as v${version} had it)` })));
    return (await store.getPolicy(ch.tx, id))!;
  });
  c.header('ETag', etagOf(updated.version));
  return c.json(updated);
});
