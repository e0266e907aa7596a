import type { Context } from 'hono';
import type { Actor, AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { type Action, type Resource, tenantScoped } from './permissions.ts';

/** The authenticated actor (the auth middleware has run on every /v1 route). */
export function actorOf(c: Context<AppEnv>): Actor {
  const actor = c.get('actor');
  if (!actor) throw new ApiError(401, 'unauthorized', 'Authentication required');
  return actor;
}

/** True when the actor's token reaches this tenant. */
export function reachesTenant(actor: Actor, tenant: string): boolean {
  return actor.tenants === null || actor.tenants.includes(tenant);
}

/**
 * Allows the request or throws. A tenant outside the token's scope is a 404 whatever the
 * action, so a tenant-scoped token learns nothing about other tenants, not even that they exist.
 */
export function authorize(c: Context<AppEnv>, resource: Resource, action: Action, tenant?: string): Actor {
  const actor = actorOf(c);
  if (tenant !== undefined && tenantScoped.has(resource) && !reachesTenant(actor, tenant)) {
    throw new ApiError(404, 'not_found', `tenant ${tenant} does not exist`);
  }
  const role = roleFor(actor, resource, tenant);
  const { authorizer } = c.get('deps');
  // An auditor with an editor tenant keeps reading everything there too.
  const allowed =
    authorizer.can(role, resource, action) ||
    (role !== actor.role && authorizer.can(actor.role, resource, action) && (actor.role === 'auditor' || actor.role === 'admin'));
  if (!allowed) {
    throw new ApiError(403, 'forbidden', `role ${role} may not ${action} ${resource}${role !== actor.role && tenant ? ` in tenant ${tenant}` : ''}`);
  }
  return actor;
}

/** The role that decides a request: a person's role in the named tenant where they have one, else their role. */
export function roleFor(actor: Actor, resource: Resource, tenant: string | undefined): Actor['role'] {
  if (tenant === undefined || !tenantScoped.has(resource)) return actor.role;
  return actor.tenantRoles?.[tenant] ?? actor.role;
}
