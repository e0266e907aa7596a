import { escapePointer } from '../../policy-schemas/index.ts';
import type { ConnectionGrant, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { ROLE_PREFIX } from '../policy-engine/casbin-policy.ts';
import { judgeConstraints } from './constraints.ts';
import { judgedSchemaProblems } from './judged-schemas.ts';

/**
 * The one judge of references and rules across a draft: which names must exist, which
 * combinations are refused. The compiler runs it over a whole tenant draft, and every save runs the
 * same functions over the entity it saves (or, for a delete, over what would remain), so whatever
 * saves also compiles. Pure: callers load the names.
 */

export type RuleProblem = { pointer: string; message: string; code: string };

/** The group and state that always exist, whether or not they are stored. */
export const DEFAULT_GROUP = 'default';
export const INITIAL_STATE = 'undefined';

/** What a draft's references are judged against. */
export type DraftNames = {
  groups: ReadonlySet<string>;
  states: ReadonlySet<string>;
  /** Every inventory id, removed tools included: a policy may still name a tool that vanished (it matches nothing). */
  toolIds: ReadonlySet<string>;
};

const isGlob = (s: string) => s.includes('*');

/** Names as judged: the stored ones plus `default` and `undefined`, which always exist. */
export function draftNames(groups: Iterable<string>, states: Iterable<string>, toolIds: Iterable<string>): DraftNames {
  return { groups: new Set([DEFAULT_GROUP, ...groups]), states: new Set([INITIAL_STATE, ...states]), toolIds: new Set(toolIds) };
}

/**
 * A tool's rules, pointers relative to the tool: its groups and states exist, and its input schema
 * is in the restricted subset unless it is an imported tool not yet active (whose definition is its
 * server's, judged at approval). Removed tools are out of every draft and are not judged.
 */
export function judgeTool(tool: Tool, names: DraftNames): RuleProblem[] {
  if (tool.status === 'removed') return [];
  const problems: RuleProblem[] = [];
  (tool.groups ?? []).forEach((g, i) => {
    if (!names.groups.has(g)) problems.push({ pointer: `/groups/${i}`, message: `unknown group "${g}"`, code: 'unknown_reference' });
  });
  if (tool.state !== undefined && !names.states.has(tool.state))
    problems.push({ pointer: '/state', message: `unknown state "${tool.state}"`, code: 'unknown_reference' });
  (tool.availableInStates ?? []).forEach((s, i) => {
    if (s !== '*' && !names.states.has(s)) problems.push({ pointer: `/availableInStates/${i}`, message: `unknown state "${s}"`, code: 'unknown_reference' });
  });
  if (tool.source?.kind !== 'mcp' || (tool.status ?? 'active') === 'active') {
    for (const p of inputSchemaProblems(tool.inputSchema)) problems.push({ ...p, pointer: `/inputSchema${p.pointer}` });
    // An output schema is held to the same dialect (DESIGN "Tool"), without the input schema's own rules.
    if (tool.outputSchema !== undefined) {
      for (const p of inputSchemaProblems(tool.outputSchema, 'output')) problems.push({ ...p, pointer: `/outputSchema${p.pointer}` });
    }
  }
  return problems;
}

/** Judges an input schema ahead of need (a server warming up after a start): fills judgedSchemaProblems' cache. */
export function warmInputSchema(schema: unknown): void {
  inputSchemaProblems(schema);
}

function inputSchemaProblems(schema: unknown, role: 'input' | 'output' = 'input'): RuleProblem[] {
  return judgedSchemaProblems(schema, role);
}

/**
 * Group rules over every group (`includes` by name): includes exist and never loop. Pointers are
 * `/groups/<name>/includes…`. Also answers each group's closure, which the compiler needs.
 */
export function judgeGroups(includes: ReadonlyMap<string, readonly string[]>): { problems: RuleProblem[]; closure: Map<string, string[]> } {
  const problems: RuleProblem[] = [];
  for (const [name, incs] of includes) {
    incs.forEach((inc, i) => {
      if (!includes.has(inc))
        problems.push({ pointer: `/groups/${escapePointer(name)}/includes/${i}`, message: `unknown group "${inc}"`, code: 'unknown_reference' });
    });
  }
  const closure = groupClosures(includes, problems);
  return { problems, closure };
}

/**
 * Each group's closure under `includes` (itself included), reporting every include cycle once,
 * named from the first group of the map that lies on it.
 */
function groupClosures(includes: ReadonlyMap<string, readonly string[]>, problems: RuleProblem[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const reported = new Set<string>();
  for (const start of includes.keys()) {
    const seen = new Set<string>([start]);
    const stack: { name: string; path: string[] }[] = [{ name: start, path: [start] }];
    while (stack.length > 0) {
      const { name, path } = stack.pop()!;
      for (const next of includes.get(name) ?? []) {
        if (next === start) {
          const cycle = [...path, start];
          const id = [...cycle].sort().join('\u0000');
          if (!reported.has(id)) {
            reported.add(id);
            problems.push({ pointer: `/groups/${escapePointer(start)}/includes`, message: `includes form a cycle: ${cycle.join(' → ')}`, code: 'cycle' });
          }
          continue;
        }
        if (seen.has(next) || !includes.has(next)) {
          seen.add(next);
          continue;
        }
        seen.add(next);
        stack.push({ name: next, path: [...path, next] });
      }
    }
    out.set(start, [...seen].sort());
  }
  return out;
}

/**
 * A tenant's rules, over its policy and grants: roles' groups exist; exact tool ids (allow, deny,
 * profiles, grants) name inventory tools; bindings name roles and no subject takes the `role:`
 * prefix Casbin keeps for roles; no tool is both enabled and disabled by one profile; a grant's
 * subjects are roles or bound subjects; argument constraints name tools and hold schemas the
 * input-schema judge accepts (constraints.ts). Pointers are `/policy/…` and `/grants/<connectionId>/…`.
 * `policyValid` false (a policy that failed its schema) skips what depends on its role names.
 */
export function judgeTenant(policy: TenantPolicy, grants: readonly ConnectionGrant[], names: DraftNames, policyValid = true): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const push = (pointer: string, message: string, code = 'unknown_reference') => problems.push({ pointer, message, code });
  const exact = (id: string, pointer: string) => {
    if (!isGlob(id) && !names.toolIds.has(id)) push(pointer, `unknown tool "${id}"`);
  };
  const roles = policy.roles ?? {};
  const bindings = policy.bindings ?? {};
  for (const [name, role] of Object.entries(roles)) {
    const at = `/policy/roles/${escapePointer(name)}`;
    (role.groups ?? []).forEach((g, i) => {
      if (g !== '*' && !names.groups.has(g)) push(`${at}/groups/${i}`, `unknown group "${g}"`);
    });
    (role.allow ?? []).forEach((id, i) => exact(id, `${at}/allow/${i}`));
    (role.deny ?? []).forEach((id, i) => exact(id, `${at}/deny/${i}`));
  }
  if (policyValid) problems.push(...judgeConstraints(policy, names.toolIds));
  for (const [subject, roleNames] of Object.entries(bindings)) {
    const at = `/policy/bindings/${escapePointer(subject)}`;
    if (subject.startsWith(ROLE_PREFIX)) push(at, `subjects must not start with "${ROLE_PREFIX}" (reserved for roles)`, 'reserved_name');
    roleNames.forEach((r, i) => {
      if (!Object.hasOwn(roles, r)) push(`${at}/${i}`, `unknown role "${r}"`);
    });
  }
  for (const [name, profile] of Object.entries(policy.profiles ?? {})) {
    const at = `/policy/profiles/${escapePointer(name)}`;
    const enabled = new Set(profile.enable ?? []);
    (profile.enable ?? []).forEach((id, i) => exact(id, `${at}/enable/${i}`));
    (profile.disable ?? []).forEach((id, i) => {
      exact(id, `${at}/disable/${i}`);
      if (enabled.has(id)) push(`${at}/disable/${i}`, `"${id}" is also in this profile's enable list; a tool is enabled or disabled, not both`, 'conflict');
    });
  }
  for (const g of grants) {
    const at = `/grants/${escapePointer(g.connectionId)}`;
    g.subjects.forEach((s, i) => {
      if (policyValid && !Object.hasOwn(roles, s) && !Object.hasOwn(bindings, s)) push(`${at}/subjects/${i}`, `"${s}" is neither a role nor a bound subject`);
    });
    g.tools.forEach((id, i) => exact(id, `${at}/tools/${i}`));
  }
  return problems;
}

/** The problems in `after` that `before` did not have: what a change would newly break. */
export function newProblems(before: readonly RuleProblem[], after: readonly RuleProblem[]): RuleProblem[] {
  const key = (p: RuleProblem) => `${p.pointer}\u0000${p.message}`;
  const old = new Set(before.map(key));
  return after.filter((p) => !old.has(key(p)));
}
