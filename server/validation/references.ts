import { escapePointer } from '../../policy-schemas/index.ts';
import type { ConnectionGrant, Group, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { type CompileError, groupClosures } from '../compiler/compile-bundle.ts';
import type { DbOrTx } from '../db/database.ts';
import type { ProblemDetail } from '../errors.ts';

const isGlob = (s: string) => s.includes('*');

async function names(db: DbOrTx, table: 'groups' | 'states'): Promise<Set<string>> {
  return new Set((await db.selectFrom(table).select('name').execute()).map((r) => r.name));
}

async function toolIds(db: DbOrTx): Promise<Set<string>> {
  return new Set((await db.selectFrom('tools').select('id').where('status', '!=', 'removed').execute()).map((r) => r.id));
}

/** Unknown groups and states a tool names. */
export async function checkToolReferences(db: DbOrTx, tool: Tool): Promise<ProblemDetail[]> {
  const problems: ProblemDetail[] = [];
  const groups = await names(db, 'groups');
  const states = await names(db, 'states');
  (tool.groups ?? []).forEach((g, i) => {
    if (!groups.has(g)) problems.push({ pointer: `/groups/${i}`, message: `unknown group "${g}"`, code: 'unknown_reference' });
  });
  if (tool.state !== undefined && !states.has(tool.state)) {
    problems.push({ pointer: '/state', message: `unknown state "${tool.state}"`, code: 'unknown_reference' });
  }
  (tool.availableInStates ?? []).forEach((s, i) => {
    if (s !== '*' && !states.has(s)) problems.push({ pointer: `/availableInStates/${i}`, message: `unknown state "${s}"`, code: 'unknown_reference' });
  });
  return problems;
}

/** Unknown included groups, and include cycles, with `group` saved as given. */
export async function checkGroupReferences(db: DbOrTx, group: Group): Promise<ProblemDetail[]> {
  const rows = await db.selectFrom('groups').select(['name', 'body']).execute();
  // The saved group first: the compiler's closure walk then names each cycle from it.
  const includes = new Map<string, string[]>([[group.name, group.includes ?? []]]);
  for (const r of rows) if (r.name !== group.name) includes.set(r.name, (JSON.parse(r.body) as Group).includes ?? []);
  const problems: ProblemDetail[] = [];
  (group.includes ?? []).forEach((g, i) => {
    if (!includes.has(g)) problems.push({ pointer: `/includes/${i}`, message: `unknown group "${g}"`, code: 'unknown_reference' });
  });
  // Stored groups have no cycle, so any cycle found runs through the saved group.
  const cycles: CompileError[] = [];
  groupClosures(includes, cycles);
  for (const c of cycles) problems.push({ pointer: '/includes', message: c.message, code: 'cycle' });
  return problems;
}

/** Unknown groups, roles and exact tool ids in a tenant policy. */
export async function checkPolicyReferences(db: DbOrTx, policy: TenantPolicy): Promise<ProblemDetail[]> {
  const problems: ProblemDetail[] = [];
  const groups = await names(db, 'groups');
  const tools = await toolIds(db);
  const roles = policy.roles ?? {};
  for (const [roleName, role] of Object.entries(roles)) {
    const base = `/roles/${escapePointer(roleName)}`;
    (role.groups ?? []).forEach((g, i) => {
      if (g !== '*' && !groups.has(g)) problems.push({ pointer: `${base}/groups/${i}`, message: `unknown group "${g}"`, code: 'unknown_reference' });
    });
    for (const list of ['allow', 'deny'] as const) {
      (role[list] ?? []).forEach((id, i) => {
        if (!isGlob(id) && !tools.has(id)) problems.push({ pointer: `${base}/${list}/${i}`, message: `unknown tool "${id}"`, code: 'unknown_reference' });
      });
    }
  }
  for (const [subject, roleNames] of Object.entries(policy.bindings ?? {})) {
    roleNames.forEach((r, i) => {
      if (!Object.hasOwn(roles, r)) problems.push({ pointer: `/bindings/${escapePointer(subject)}/${i}`, message: `unknown role "${r}"`, code: 'unknown_reference' });
    });
  }
  for (const [profile, p] of Object.entries(policy.profiles ?? {})) {
    for (const list of ['enable', 'disable'] as const) {
      (p[list] ?? []).forEach((id, i) => {
        if (!tools.has(id)) problems.push({ pointer: `/profiles/${escapePointer(profile)}/${list}/${i}`, message: `unknown tool "${id}"`, code: 'unknown_reference' });
      });
    }
  }
  return problems;
}

/** Unknown exact tool ids in a grant. */
export async function checkGrantReferences(db: DbOrTx, grant: ConnectionGrant): Promise<ProblemDetail[]> {
  const tools = await toolIds(db);
  const problems: ProblemDetail[] = [];
  grant.tools.forEach((id, i) => {
    if (!isGlob(id) && !tools.has(id)) problems.push({ pointer: `/tools/${i}`, message: `unknown tool "${id}"`, code: 'unknown_reference' });
  });
  return problems;
}
