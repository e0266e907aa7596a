import { Hono } from 'hono';
import type { PolicyTests } from '../../policy-schemas/types.gen.ts';
import { withChange } from '../audit/change.ts';
import { actorOf, authorize } from '../auth/guard.ts';
import { actorMay } from '../auth/permissions.ts';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { dropReadOnly, readJson, takeReason, validOrThrow } from '../http/body.ts';
import { changedMeanwhile, checkVersion, etagOf, requiredIfMatch } from '../http/versioning.ts';
import { getPolicyTests, updatePolicyTests } from '../store/policy-tests.ts';
import { checkPolicyTests, cutsOf } from '../validation/policy-tests.ts';
import { throwProblems } from './document-routes.ts';

/**
 * `GET`/`PUT /v1/tenants/:tenant/tests`: the tenant's policy tests, one versioned document
 * (`{ tests: [...] }`, If-Match on PUT, audited). They run in simulate and gate every publish.
 * Editors may add tests and expectations; removing or weakening one (cutsOf) is an admin's change,
 * as forcing a publish past a failing test is: otherwise an editor could delete the failing test,
 * publish, and put it back.
 */
export const policyTestRoutes = new Hono<AppEnv>();

const notFound = (tenant: string) => new ApiError(404, 'not_found', `tenant ${tenant} does not exist`);

policyTestRoutes.get('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'policy', 'read', tenant);
  const rec = await getPolicyTests(c.get('deps').database.db, tenant);
  if (!rec) throw notFound(tenant);
  c.header('ETag', etagOf(rec.version));
  return c.json(rec);
});

policyTestRoutes.put('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'policy', 'write', tenant);
  const expected = requiredIfMatch(c);
  const body = await readJson(c);
  const object = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const reason = takeReason(c, object);
  if (object) dropReadOnly(object, ['tenant']);
  const { tests } = validOrThrow<PolicyTests>('policy-tests', body);
  const mayCut = actorMay(c.get('deps').authorizer, actorOf(c), 'bundle', 'force', tenant);
  const updated = await withChange(c, reason, async (ch) => {
    const existing = await getPolicyTests(ch.tx, tenant);
    if (!existing) throw notFound(tenant);
    checkVersion(expected, existing);
    throwProblems(await checkPolicyTests(ch.tx, tests));
    // Editors add to the net; cutting it is the admin's, who may also force a publish past it.
    const cuts = cutsOf(existing.tests, tests);
    if (cuts.length && !mayCut) {
      const more = cuts.length > 1 ? ` (and ${cuts.length - 1} more)` : '';
      throw new ApiError(403, 'forbidden', `${cuts[0].pointer}: ${cuts[0].message}${more}`, { errors: cuts });
    }
    if (!(await updatePolicyTests(ch.tx, tenant, tests, existing.version, new Date().toISOString()))) {
      throw changedMeanwhile(`the tests of ${tenant}`, await getPolicyTests(ch.tx, tenant));
    }
    await ch.record({ action: 'update', entityType: 'tests', entityId: tenant, tenant, before: { tests: existing.tests }, after: { tests } });
    return (await getPolicyTests(ch.tx, tenant))!;
  });
  c.header('ETag', etagOf(updated.version));
  return c.json(updated);
});
