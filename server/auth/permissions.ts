import { newEnforcer, newModelFromString } from 'casbin';
import type { SessionPermissions } from '../../policy-schemas/types.gen.ts';
import type { Actor, Role } from '../context.ts';

/** The resource kinds a request may act on. */
export const RESOURCES = [
  'inventory',
  'tenant',
  'policy',
  'grant',
  'bundle',
  'runtime',
  'audit',
  'token',
  'simulate',
  'mcp',
  'metrics',
  'decision',
  'sso',
  'key',
  'approval',
] as const;
/**
 * What a request wants to do to a resource; `force` publishes past failing policy tests; `request`
 * opens an approval request (runtimes) and `decide` approves or denies one (people).
 */
export const ACTIONS = ['read', 'write', 'publish', 'force', 'pull', 'report', 'export', 'run', 'request', 'decide'] as const;

export type Resource = (typeof RESOURCES)[number];
export type Action = (typeof ACTIONS)[number];

/** The actions each resource has: what a session's permissions list (a `*` rule grants no others). */
export const RESOURCE_ACTIONS: Readonly<Record<Resource, readonly Action[]>> = {
  inventory: ['read', 'write'],
  tenant: ['read', 'write'],
  policy: ['read', 'write'],
  grant: ['read', 'write'],
  bundle: ['read', 'publish', 'force', 'pull'],
  runtime: ['read', 'report'],
  audit: ['read', 'export'],
  token: ['read', 'write'],
  simulate: ['run'],
  mcp: ['read', 'write'],
  metrics: ['read'],
  decision: ['read', 'export', 'report'],
  sso: ['read', 'write'],
  key: ['read', 'write'],
  approval: ['read', 'request', 'decide'],
};

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
  // Not `*`: forcing a publish past failing tests is the admin's.
  ['editor', 'bundle', 'read'],
  ['editor', 'bundle', 'pull'],
  ['editor', 'bundle', 'publish'],
  ['editor', 'simulate', 'run'],
  ['editor', 'runtime', 'read'],
  ['editor', 'decision', 'read'],
  ['editor', 'key', 'read'],
  // Editors of a tenant decide its approval requests; viewers and auditors see the queue without arguments.
  ['editor', 'approval', 'read'],
  ['editor', 'approval', 'decide'],
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
  ['viewer', 'approval', 'read'],
  ['auditor', '*', 'read'],
  ['auditor', 'bundle', 'pull'],
  ['auditor', 'audit', 'export'],
  ['auditor', 'decision', 'export'],
  ['auditor', 'simulate', 'run'],
  ['runtime', 'bundle', 'pull'],
  ['runtime', 'runtime', 'report'],
  ['runtime', 'decision', 'report'],
  ['runtime', 'approval', 'request'],
];

/** Resources that belong to one tenant: tenant-scoped tokens reach only their own. */
export const tenantScoped: ReadonlySet<Resource> = new Set(['tenant', 'policy', 'grant', 'bundle', 'runtime', 'simulate', 'decision', 'approval']);

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

/** The role that decides a request: a person's role in the named tenant where they have one, else their role. */
export function roleFor(actor: Actor, resource: Resource, tenant: string | undefined): Role {
  if (tenant === undefined || !tenantScoped.has(resource)) return actor.role;
  return actor.tenantRoles?.[tenant] ?? actor.role;
}

/**
 * Whether the actor's roles allow an action (in a tenant, for tenant-scoped resources). Whether
 * the actor reaches that tenant at all is the caller's question (guard.ts answers 404).
 */
export function actorMay(authorizer: Authorizer, actor: Actor, resource: Resource, action: Action, tenant?: string): boolean {
  const role = roleFor(actor, resource, tenant);
  if (authorizer.can(role, resource, action)) return true;
  // An auditor with an editor tenant keeps reading everything there too.
  return role !== actor.role && (actor.role === 'auditor' || actor.role === 'admin') && authorizer.can(actor.role, resource, action);
}

/**
 * What a session may do, by the same rules the API enforces: the console shows and hides by this
 * answer and keeps no rules of its own.
 */
export function sessionPermissions(authorizer: Authorizer, actor: Actor): SessionPermissions {
  const allowed = (resources: readonly Resource[], tenant?: string) => {
    const out: Record<string, Action[]> = {};
    for (const resource of resources) {
      const actions = RESOURCE_ACTIONS[resource].filter((action) => actorMay(authorizer, actor, resource, action, tenant));
      if (actions.length) out[resource] = actions;
    }
    return out;
  };
  const tenants: Record<string, Record<string, Action[]>> = {};
  for (const tenant of Object.keys(actor.tenantRoles ?? {}).sort()) tenants[tenant] = allowed([...tenantScoped], tenant);
  return { everyTenant: actor.tenants === null, actions: allowed(RESOURCES), tenants };
}
