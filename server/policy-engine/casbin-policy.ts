import type { BundleCasbin } from '../../policy-schemas/types.gen.ts';
import { globMatcher } from '../../runtime/glob.ts';

/**
 * The Casbin model every bundle carries. Roles are `role:<name>` within the tenant's domain; the
 * effect is allow-unless-denied; only `g()` and `keyMatch` (a trailing `*` matches any rest), which
 * every Casbin implementation has. `r.sub != p.sub` stops a subject that happens to be called
 * `role:x` from acting as the role itself.
 */
export const CASBIN_MODEL = `[request_definition]
r = sub, dom, obj, act

[policy_definition]
p = sub, dom, obj, act, eft

[role_definition]
g = _, _, _

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = g(r.sub, p.sub, r.dom) && r.sub != p.sub && r.dom == p.dom && keyMatch(r.obj, p.obj) && r.act == p.act
`;

/** What each `enforce()` argument is, in order. */
export const CASBIN_REQUEST = ['subject', 'tenant', 'toolId', 'call'];

/** The action every tool decision is asked about. */
export const CALL_ACTION = 'call';

/** Prefix that keeps role names apart from subjects in Casbin's single name space. */
export const ROLE_PREFIX = 'role:';

export type CasbinInput = {
  tenant: string;
  roles: Record<string, { allow: readonly string[]; deny: readonly string[] }>;
  bindings: Record<string, readonly string[]>;
  /** Every tool id in the catalog: globs keyMatch cannot express are expanded against it. */
  toolIds: readonly string[];
};

/** Model, policy rows (sorted, without duplicates) and request order for a tenant's policy. */
export function casbinPolicy(input: CasbinInput): BundleCasbin {
  const rows = new Map<string, string[]>();
  const add = (row: string[]) => rows.set(JSON.stringify(row), row);
  for (const [name, role] of Object.entries(input.roles)) {
    for (const [effect, globs] of [
      ['allow', role.allow],
      ['deny', role.deny],
    ] as const) {
      for (const glob of globs) {
        for (const obj of keyMatchPatterns(glob, input.toolIds)) add(['p', ROLE_PREFIX + name, input.tenant, obj, CALL_ACTION, effect]);
      }
    }
  }
  for (const [subject, roles] of Object.entries(input.bindings)) {
    for (const role of roles) add(['g', subject, ROLE_PREFIX + role, input.tenant]);
  }
  const policy = [...rows.values()].sort(compareRows);
  return { model: CASBIN_MODEL, policy, request: [...CASBIN_REQUEST] };
}

/**
 * A tool glob as keyMatch patterns: an exact id stays itself, a glob whose only stars end it
 * becomes `prefix*`; any other glob is expanded to the catalog ids it matches.
 */
export function keyMatchPatterns(glob: string, toolIds: readonly string[]): string[] {
  const firstStar = glob.indexOf('*');
  if (firstStar === -1) return [glob];
  if (/^\**$/.test(glob.slice(firstStar))) return [`${glob.slice(0, firstStar)}*`];
  const match = globMatcher(glob);
  return toolIds.filter(match);
}

function compareRows(a: string[], b: string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length - b.length;
}
