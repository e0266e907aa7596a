import { newEnforcer, newModelFromString } from 'casbin';
import type { Role } from '../context.ts';

/** What a request wants to do: a resource kind and an action on it. */
export type Resource =
  | 'inventory'
  | 'tenant'
  | 'policy'
  | 'grant'
  | 'bundle'
  | 'runtime'
  | 'audit'
  | 'token'
  | 'simulate'
  | 'mcp'
  | 'metrics'
  | 'decision'
  | 'sso'
  | 'key';
export type Action = 'read' | 'write' | 'publish' | 'pull' | 'report' | 'export' | 'run';

// Role × resource × action, decided by Casbin. Tenant scoping is separate (an editor of `acme`
// passes this check for `policy/write`, then the tenant check confines it to `acme`).
const model = `
[request_definition]
r = role, obj, act

[policy_definition]
p = role, obj, act

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = r.role == p.role && keyMatch(r.obj, p.obj) && (r.act == p.act || p.act == "*")
`;

const rules: [Role, string, string][] = [
  ['admin', '*', '*'],
  ['editor', 'inventory', 'read'],
  ['editor', 'mcp', 'read'],
  ['editor', 'tenant', 'read'],
  ['editor', 'policy', '*'],
  ['editor', 'grant', '*'],
  ['editor', 'bundle', '*'],
  ['editor', 'simulate', 'run'],
  ['editor', 'runtime', 'read'],
  ['editor', 'decision', 'read'],
  ['editor', 'key', 'read'],
  ['viewer', 'inventory', 'read'],
  ['viewer', 'mcp', 'read'],
  ['viewer', 'tenant', 'read'],
  ['viewer', 'policy', 'read'],
  ['viewer', 'grant', 'read'],
  ['viewer', 'bundle', 'read'],
  ['viewer', 'bundle', 'pull'],
  ['viewer', 'simulate', 'run'],
  ['viewer', 'runtime', 'read'],
  ['viewer', 'decision', 'read'],
  ['viewer', 'key', 'read'],
  ['auditor', '*', 'read'],
  ['auditor', 'bundle', 'pull'],
  ['auditor', 'audit', 'export'],
  ['auditor', 'decision', 'export'],
  ['auditor', 'simulate', 'run'],
  ['runtime', 'bundle', 'pull'],
  ['runtime', 'runtime', 'report'],
  ['runtime', 'decision', 'report'],
];

/** Resources that belong to one tenant: tenant-scoped tokens reach only their own. */
export const tenantScoped: ReadonlySet<Resource> = new Set(['tenant', 'policy', 'grant', 'bundle', 'runtime', 'simulate', 'decision']);

export type Authorizer = { can(role: Role, resource: Resource, action: Action): boolean; rules: typeof rules };

/** Builds the admin-API enforcer once; decisions are memoised (the space is tiny). */
export async function createAuthorizer(): Promise<Authorizer> {
  const enforcer = await newEnforcer(newModelFromString(model));
  await enforcer.addPolicies(rules.map((r) => [...r]));
  const memo = new Map<string, boolean>();
  return {
    rules,
    can(role, resource, action) {
      const key = `${role}\u0000${resource}\u0000${action}`;
      let v = memo.get(key);
      if (v === undefined) {
        v = enforcer.enforceSync(role, resource, action);
        memo.set(key, v);
      }
      return v;
    },
  };
}
