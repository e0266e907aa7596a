import { Hono } from 'hono';
import type { PromoteRequest } from '../../policy-schemas/types.gen.ts';
import { withChange } from '../audit/change.ts';
import { actorOf, authorize } from '../auth/guard.ts';
import { actorMay } from '../auth/permissions.ts';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { readJson, takeReason, validOrThrow } from '../http/body.ts';
import { applyPromotion, planPromotion } from '../review/promote.ts';
import { getPolicyTests } from '../store/policy-tests.ts';
import { requireTenantExists } from '../store/tenants.ts';
import { cutsOf } from '../validation/policy-tests.ts';

/**
 * `POST /v1/tenants/:tenant/promote { to, reason }`: copies this tenant's roles, bindings,
 * profiles, budgets, policy tests and grants into tenant `to`'s draft (audited); with `?plan=1`
 * answers the same account of what would change and writes nothing. Publishing the target stays
 * a separate step, under the target's own review rule.
 */
export const promoteRoutes = new Hono<AppEnv>();

promoteRoutes.post('/', async (c) => {
  const from = c.req.param('tenant') as string;
  authorize(c, 'policy', 'read', from);
  const plan = c.req.query('plan');
  if (plan !== undefined && plan !== '1' && plan !== '0') {
    throw new ApiError(400, 'validation', 'plan must be 1 or 0', { errors: [{ pointer: '/query/plan', message: 'must be 1 or 0' }] });
  }
  const body = await readJson(c);
  const object = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const reason = takeReason(c, object);
  const { to } = validOrThrow<PromoteRequest>('promote-request', body);
  const db = c.get('deps').database.db;
  await requireTenantExists(db, from);
  if (to === from)
    throw new ApiError(400, 'validation', 'A tenant cannot be promoted into itself', { errors: [{ pointer: '/to', message: 'must name another tenant' }] });
  // The target is written: its policy, tests and grants. A token that cannot reach it learns nothing.
  authorize(c, 'policy', 'write', to);
  authorize(c, 'grant', 'write', to);
  if (plan === '1') return c.json({ ...(await planPromotion(c.get('deps').compiler, db, from, to)).result, applied: false });
  if (reason === null) {
    throw new ApiError(400, 'validation', 'A promotion needs a reason (body "reason" or the Toolgate-Reason header)', {
      errors: [{ pointer: '/reason', message: 'is required' }],
    });
  }
  const planned = await planPromotion(c.get('deps').compiler, db, from, to);
  // Promoting replaces the target's policy tests: cutting them that way is as much an admin's change as a PUT.
  if (!actorMay(c.get('deps').authorizer, actorOf(c), 'bundle', 'force', to)) {
    const cuts = cutsOf((await getPolicyTests(db, to))?.tests ?? [], planned.tests);
    if (cuts.length) {
      throw new ApiError(403, 'forbidden', `promoting into ${to} would cut its policy tests: ${cuts[0].pointer}: ${cuts[0].message}`, {
        errors: cuts.map((cut) => ({ ...cut, pointer: `/tenants/${to}/tests${cut.pointer.slice('/tests'.length)}` })),
      });
    }
  }
  await withChange(c, reason, (ch) => applyPromotion(ch, planned));
  return c.json({ ...planned.result, applied: true });
});
