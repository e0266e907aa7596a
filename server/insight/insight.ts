import type { EvaluationResult, StoredDecision, SubjectOverview, TenantPolicy, ToolUsage } from '../../policy-schemas/types.gen.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import type { Compiler } from '../compiler/compiler.ts';
import type { DbOrTx } from '../db/database.ts';
import { listDecisions } from '../decisions/decision-store.ts';
import { ApiError } from '../errors.ts';
import { getPolicy, tenantDocument } from '../store/tenants.ts';

const RECENT = 20;

type RoleUsage = ToolUsage['tenants'][number]['roles'][number];

/** The tenant's draft compiled, or null when it does not compile (the pages say so rather than fail). */
async function draftOf(compiler: Compiler, db: DbOrTx, tenant: string): Promise<LoadedBundle | null> {
  try {
    return await (await compiler.compileDraft(db, tenant)).loaded();
  } catch (err) {
    if (err instanceof ApiError && err.code === 'compile_error') return null;
    throw err;
  }
}

/** What each role of one tenant's draft does with a tool, and the bound subjects it reaches. */
export async function toolUsageIn(
  compiler: Compiler,
  db: DbOrTx,
  tenant: { id: string; name: string },
  toolId: string,
  mayReadDecisions: boolean,
): Promise<ToolUsage['tenants'][number]> {
  const loaded = await draftOf(compiler, db, tenant.id);
  const tool = loaded?.byId.get(toolId);
  const recentDecisions = mayReadDecisions ? await recent(db, tenant.id, { tool: toolId }) : null;
  if (!loaded || !tool) {
    // Without a compiled draft (or with the tool left out of it) no role has an outcome to show: none are listed.
    return { tenant: tenant.id, name: tenant.name, excluded: 'missing', roles: [], subjects: [], recentDecisions };
  }
  const roles: RoleUsage[] = [];
  for (const role of loaded.roles.values()) {
    const i = tool.pos;
    const groupOk = role.permitsAnyGroup || tool.groups.some((g) => role.groups.has(g));
    const outcome: RoleUsage['outcome'] =
      role.deny[i] === 1
        ? 'denied'
        : role.allow[i] !== 1
          ? 'not_allowed'
          : !groupOk
            ? 'group'
            : tool.def && role.requireApproval.has(tool.def.effect)
              ? 'require_approval'
              : 'allow';
    const constraints = role.constraints.filter((k) => k.tools[i] === 1).map((k) => ({ index: k.index, reason: k.reason, otherwise: k.otherwise }));
    roles.push({ role: role.name, outcome, constraints });
  }
  const reaching = new Set(roles.filter((r) => r.outcome === 'allow' || r.outcome === 'require_approval').map((r) => r.role));
  const subjects = [...loaded.bindings].filter(([, rs]) => rs.some((r) => reaching.has(r))).map(([s]) => s);
  return { tenant: tenant.id, name: tenant.name, excluded: tool.excluded, roles, subjects, recentDecisions };
}

/**
 * One tenant's view of a subject: its roles, what it would see on the draft asking for every group
 * its roles permit, and its recent decisions. Undefined when the subject is bound to no role there.
 */
export async function subjectIn(
  compiler: Compiler,
  db: DbOrTx,
  tenant: { id: string; name: string },
  subject: string,
  mayReadDecisions: boolean,
): Promise<SubjectOverview['tenants'][number] | undefined> {
  const rec = await getPolicy(db, tenant.id);
  const policy = rec ? tenantDocument<TenantPolicy>(rec) : undefined;
  // Only the policy's own bindings: a subject named like an inherited member (constructor) is bound to nothing.
  const roles = policy?.bindings && Object.hasOwn(policy.bindings, subject) ? policy.bindings[subject] : [];
  const recentDecisions = mayReadDecisions ? await recent(db, tenant.id, { subject }) : null;
  if (!roles.length && !recentDecisions?.length) return undefined;
  const permitted = roles.flatMap((r) => policy?.roles?.[r]?.groups ?? []);
  const groups = permitted.includes('*') ? ['*'] : permitted.length ? [...new Set(permitted)] : ['default'];
  const loaded = await draftOf(compiler, db, tenant.id);
  const sees: EvaluationResult | null = loaded ? evaluate(loaded, { subject, groups }) : null;
  return { tenant: tenant.id, name: tenant.name, roles, groups, sees, recentDecisions };
}

async function recent(db: DbOrTx, tenant: string, filter: { tool?: string; subject?: string }): Promise<StoredDecision[]> {
  return listDecisions(db, tenant, filter, null, RECENT);
}
