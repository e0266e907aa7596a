import { escapePointer, unescapePointer } from '../../policy-schemas/pointer.ts';
import type { ConnectionGrant, Group, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import type { DbOrTx } from '../db/database.ts';
import type { ProblemDetail } from '../errors.ts';
import { type DraftNames, type RuleProblem, draftNames, judgeGroups, judgeTenant, judgeTool, newProblems } from './draft-rules.ts';

// The save side of the judge in draft-rules.ts: loads what an entity is judged against from the
// database (inside the write transaction) and maps the judge's pointers onto the saved body.

// A tool's rules never look at other tools' ids, so a tool save skips reading them.
async function loadNames(db: DbOrTx, withToolIds = true): Promise<DraftNames> {
  const groups = (await db.selectFrom('groups').select('name').execute()).map((r) => r.name);
  const states = (await db.selectFrom('states').select('name').execute()).map((r) => r.name);
  const tools = withToolIds ? (await db.selectFrom('tools').select('id').execute()).map((r) => r.id) : [];
  return draftNames(groups, states, tools);
}

const problemDetails = (problems: RuleProblem[], strip = ''): ProblemDetail[] =>
  problems.map((p) => ({ pointer: p.pointer.startsWith(strip) ? p.pointer.slice(strip.length) : p.pointer, message: p.message, code: p.code }));

/** A tool's rules (unknown groups and states, its input schema), pointers into the tool. */
export async function checkToolReferences(db: DbOrTx, tool: Tool): Promise<ProblemDetail[]> {
  return problemDetails(judgeTool(tool, await loadNames(db, false)));
}

/** Unknown included groups, and include cycles, with `group` saved as given; pointers into the group. */
export async function checkGroupReferences(db: DbOrTx, group: Group): Promise<ProblemDetail[]> {
  const rows = await db.selectFrom('groups').select(['name', 'body']).execute();
  // The saved group first: the closure walk then names each cycle from it.
  const includes = new Map<string, string[]>([[group.name, group.includes ?? []]]);
  for (const r of rows) if (r.name !== group.name) includes.set(r.name, (JSON.parse(r.body) as Group).includes ?? []);
  const own = `/groups/${escapePointer(group.name)}`;
  return problemDetails(
    judgeGroups(includes).problems.filter((p) => p.pointer.startsWith(`${own}/`)),
    own,
  );
}

export type TenantJudgement = {
  /** Problems in the saved entity, pointers into its body: a 400. */
  own: ProblemDetail[];
  /** Problems the change would newly cause in the tenant's other entities (named by pointer): a 409. */
  others: ProblemDetail[];
};

/**
 * Judges a tenant with its policy and/or one grant replaced, as they would be saved. The saved
 * entity's problems are all reported; others only when this change causes them.
 */
export async function judgeTenantChange(db: DbOrTx, tenant: string, change: { policy: TenantPolicy } | { grant: ConnectionGrant }): Promise<TenantJudgement> {
  const names = await loadNames(db);
  const stored = await db.selectFrom('tenant_policies').select('body').where('tenant', '=', tenant).executeTakeFirst();
  const policyBefore: TenantPolicy = stored ? (JSON.parse(stored.body) as TenantPolicy) : {};
  const grantsBefore = (await db.selectFrom('grants').select('body').where('tenant', '=', tenant).execute()).map((r) => JSON.parse(r.body) as ConnectionGrant);
  const policyAfter = 'policy' in change ? change.policy : policyBefore;
  const grantsAfter = 'grant' in change ? [...grantsBefore.filter((g) => g.connectionId !== change.grant.connectionId), change.grant] : grantsBefore;
  const after = judgeTenant(policyAfter, grantsAfter, names);
  const own = 'policy' in change ? '/policy' : `/grants/${escapePointer(change.grant.connectionId)}`;
  const mine = (p: RuleProblem) => p.pointer === own || p.pointer.startsWith(`${own}/`);
  const caused = newProblems(judgeTenant(policyBefore, grantsBefore, names), after).filter((p) => !mine(p));
  return {
    own: problemDetails(after.filter(mine), own),
    others: problemDetails(caused.map((p) => ({ ...p, pointer: `/tenants/${escapePointer(tenant)}${p.pointer}` }))),
  };
}

type Draft = { tools: Tool[]; groups: Map<string, string[]>; states: string[]; tenants: { id: string; policy: TenantPolicy; grants: ConnectionGrant[] }[] };

async function loadDraft(db: DbOrTx): Promise<Draft> {
  const tools = (await db.selectFrom('tools').select('body').execute()).map((r) => JSON.parse(r.body) as Tool);
  const groups = new Map((await db.selectFrom('groups').select(['name', 'body']).execute()).map((r) => [r.name, (JSON.parse(r.body) as Group).includes ?? []]));
  const states = (await db.selectFrom('states').select('name').execute()).map((r) => r.name);
  const grants = (await db.selectFrom('grants').select(['tenant', 'body']).execute()).map((r) => ({
    tenant: r.tenant,
    grant: JSON.parse(r.body) as ConnectionGrant,
  }));
  const tenants = (await db.selectFrom('tenant_policies').select(['tenant', 'body']).execute()).map((r) => ({
    id: r.tenant,
    policy: JSON.parse(r.body) as TenantPolicy,
    grants: grants.filter((g) => g.tenant === r.tenant).map((g) => g.grant),
  }));
  return { tools, groups, states, tenants };
}

/** Every rule over the whole draft, every tenant's included, with pointers that name the entity. */
function judgeDraft(d: Draft): RuleProblem[] {
  const names = draftNames(
    d.groups.keys(),
    d.states,
    d.tools.map((t) => t.id),
  );
  const out: RuleProblem[] = [];
  for (const t of d.tools) for (const p of judgeTool(t, names)) out.push({ ...p, pointer: `/tools/${escapePointer(t.id)}${p.pointer}` });
  out.push(...judgeGroups(d.groups).problems);
  for (const t of d.tenants) for (const p of judgeTenant(t.policy, t.grants, names)) out.push({ ...p, pointer: `/tenants/${escapePointer(t.id)}${p.pointer}` });
  return out;
}

/**
 * What deleting a tool, group or state would break: the rules the remaining draft would newly
 * fail, each naming its referrer. Empty when the delete is safe.
 */
export async function referrersOf(db: DbOrTx, kind: 'tool' | 'group' | 'state', key: string): Promise<ProblemDetail[]> {
  const before = await loadDraft(db);
  const after: Draft = {
    ...before,
    tools: kind === 'tool' ? before.tools.filter((t) => t.id !== key) : before.tools,
    groups: kind === 'group' ? new Map([...before.groups].filter(([name]) => name !== key)) : before.groups,
    states: kind === 'state' ? before.states.filter((s) => s !== key) : before.states,
  };
  return problemDetails(newProblems(judgeDraft(before), judgeDraft(after))).map((p) => ({
    ...p,
    message: `${referrer(p.pointer)} ${verb(p.pointer)} ${key}`,
    code: 'in_use',
  }));
}

/** Who a judge pointer names, in words: `tool x`, `group g`, `role r of tenant t`, `grant c of tenant t`. */
function referrer(pointer: string): string {
  const [, kind, name, ...rest] = pointer.split('/').map(unescapePointer);
  if (kind === 'tools') return `tool ${name}`;
  if (kind === 'groups') return `group ${name}`;
  if (kind !== 'tenants') return pointer;
  if (rest[0] === 'grants') return `grant ${rest[1]} of tenant ${name}`;
  const singular: Record<string, string> = { roles: 'role', profiles: 'profile', bindings: 'binding of' };
  return rest[1] === 'roles' || rest[1] === 'profiles' || rest[1] === 'bindings'
    ? `${singular[rest[1]]} ${rest[2]} of tenant ${name}`
    : `the policy of tenant ${name}`;
}

function verb(pointer: string): string {
  if (/^\/groups\/[^/]+\/includes/.test(pointer)) return 'includes';
  if (/^\/tools\/[^/]+\/groups\//.test(pointer)) return 'is in';
  if (/\/roles\/[^/]+\/groups\//.test(pointer)) return 'permits';
  if (/\/(state|availableInStates)(\/|$)/.test(pointer)) return 'uses';
  return 'names';
}
