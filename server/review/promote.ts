import type { ConnectionGrant, PolicyTest, PromoteResult, TenantPolicy } from '../../policy-schemas/types.gen.ts';
import type { Change } from '../audit/change.ts';
import type { Compiler } from '../compiler/compiler.ts';
import { compileError } from '../compiler/publish.ts';
import type { DbOrTx } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { diffBundles, sameJson } from '../policy-engine/diff.ts';
import { getPolicyTests, updatePolicyTests } from '../store/policy-tests.ts';
import { type DraftSnapshot, loadDraftSnapshot } from '../store/snapshot.ts';
import { deleteGrant, getPolicy, insertGrant, listGrants, tenantDocument, updateGrant, updatePolicy } from '../store/tenants.ts';

type Changes = PromoteResult['roles'];

/** What promoting `from` into `to` writes: the target's policy, tests and grants as they would become. */
type PromotePlan = {
  result: Omit<PromoteResult, 'applied'>;
  policy: TenantPolicy;
  policyVersion: number;
  tests: PolicyTest[];
  testsVersion: number;
  grants: ConnectionGrant[];
};

/**
 * Plans a promotion (environments are tenants): the target's roles, bindings, profiles and budgets
 * become the source's, and so do its policy tests and grants; the target keeps its own review
 * rule, bundle lifetime and name. The inventory is shared, so it is not copied. `diff` compiles
 * the target's draft before and after.
 */
export async function planPromotion(compiler: Compiler, db: DbOrTx, from: string, to: string): Promise<PromotePlan> {
  const [source, target] = await Promise.all([loadDraftSnapshot(db, from), loadDraftSnapshot(db, to)]);
  if (!source) throw new ApiError(404, 'not_found', `tenant ${from} does not exist`);
  if (!target) throw new ApiError(404, 'not_found', `tenant ${to} does not exist`, { errors: [{ pointer: '/to', message: 'no such tenant' }] });
  const targetPolicy = await getPolicy(db, to);
  const sourceTests = (await getPolicyTests(db, from))?.tests ?? [];
  const targetTests = await getPolicyTests(db, to);

  const { budgets: _drop, ...kept } = target.policy;
  const policy: TenantPolicy = {
    ...kept,
    roles: source.policy.roles ?? {},
    bindings: source.policy.bindings ?? {},
    profiles: source.policy.profiles ?? {},
    ...(source.policy.budgets ? { budgets: source.policy.budgets } : {}),
  };
  const grants = source.grants.map((g) => ({ ...g, ...('tenant' in g ? { tenant: to } : {}) }));
  const after: DraftSnapshot = { ...target, policy, grants };
  // Through the server's compiler: a large inventory compiles in its worker, and the target's
  // current draft is often compiled already.
  const before = await compiler.compiledOrErrors(target);
  const compiled = await compiler.compiledOrErrors(after);
  if ('errors' in compiled) throw compileError(to, compiled.errors);
  // A target whose own draft does not compile is still promoted into: the diff then starts from the result.
  const diff = await diffBundles(
    { version: 'draft', bundle: 'errors' in before ? compiled.bundle : before.bundle },
    { version: 'draft', bundle: compiled.bundle },
  );

  return {
    result: {
      from,
      to,
      roles: changes(target.policy.roles ?? {}, policy.roles ?? {}),
      bindings: changes(target.policy.bindings ?? {}, policy.bindings ?? {}),
      profiles: changes(target.policy.profiles ?? {}, policy.profiles ?? {}),
      budgetsChanged: !sameJson(target.policy.budgets ?? null, policy.budgets ?? null),
      grants: changes(
        byKey(target.grants, (g) => g.connectionId),
        byKey(grants, (g) => g.connectionId),
      ),
      tests: changes(
        byKey(targetTests?.tests ?? [], (t) => t.name),
        byKey(sourceTests, (t) => t.name),
      ),
      diff,
    },
    policy,
    policyVersion: targetPolicy?.version ?? 0,
    tests: sourceTests,
    testsVersion: targetTests?.version ?? 0,
    grants,
  };
}

/** Writes a plan into the target's draft, with one audit event per entity changed and one for the promotion. */
export async function applyPromotion(ch: Change, plan: PromotePlan): Promise<void> {
  const { to, from } = plan.result;
  const now = new Date().toISOString();
  const current = await getPolicy(ch.tx, to);
  if (!current || current.version !== plan.policyVersion) throw changed(to);
  const beforePolicy = tenantDocument<TenantPolicy>(current);
  if (!sameJson(beforePolicy, plan.policy)) {
    if (!(await updatePolicy(ch.tx, to, plan.policy, current.version, now))) throw changed(to);
    await ch.record({ action: 'update', entityType: 'policy', entityId: to, tenant: to, before: beforePolicy, after: plan.policy });
  }
  const tests = await getPolicyTests(ch.tx, to);
  if (!tests || tests.version !== plan.testsVersion) throw changed(to);
  if (!sameJson(tests.tests, plan.tests)) {
    if (!(await updatePolicyTests(ch.tx, to, plan.tests, tests.version, now))) throw changed(to);
    await ch.record({ action: 'update', entityType: 'tests', entityId: to, tenant: to, before: { tests: tests.tests }, after: { tests: plan.tests } });
  }
  const existing = new Map((await listGrants(ch.tx, to)).map((g) => [g.connectionId, g]));
  for (const g of plan.grants) {
    const old = existing.get(g.connectionId);
    existing.delete(g.connectionId);
    if (!old) {
      await insertGrant(ch.tx, to, g, now);
      await ch.record({ action: 'create', entityType: 'grant', entityId: g.connectionId, tenant: to, before: null, after: g });
    } else if (!sameJson(tenantDocument<ConnectionGrant>(old), g)) {
      if (!(await updateGrant(ch.tx, to, g, old.version, now))) throw changed(to);
      await ch.record({ action: 'update', entityType: 'grant', entityId: g.connectionId, tenant: to, before: tenantDocument(old), after: g });
    }
  }
  for (const old of existing.values()) {
    if (!(await deleteGrant(ch.tx, to, old.connectionId, old.version))) throw changed(to);
    await ch.record({ action: 'delete', entityType: 'grant', entityId: old.connectionId, tenant: to, before: tenantDocument(old), after: null });
  }
  const { diff: _diff, ...summary } = plan.result;
  await ch.record({ action: 'promote', entityType: 'tenant', entityId: to, tenant: to, before: null, after: { ...summary, from } });
}

const changed = (to: string) => new ApiError(409, 'conflict', `The draft of ${to} changed while it was being promoted into; look at the plan again`);

function byKey<T>(items: T[], key: (t: T) => string): Record<string, T> {
  return Object.fromEntries(items.map((t) => [key(t), t]));
}

function changes(before: Record<string, unknown>, after: Record<string, unknown>): Changes {
  return {
    added: Object.keys(after).filter((k) => !(k in before)),
    removed: Object.keys(before).filter((k) => !(k in after)),
    changed: Object.keys(after).filter((k) => k in before && !sameJson(before[k], after[k])),
  };
}
