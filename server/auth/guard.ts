import type { Context } from 'hono';
import type { Actor, AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { type Action, type Authorizer, type Resource, actorMay, roleFor, tenantScoped } from './permissions.ts';

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

/** Whether authorize() would let the actor act (in the tenant), as a yes or no instead of an error. */
export function permits(authorizer: Authorizer, actor: Actor, resource: Resource, action: Action, tenant?: string): boolean {
  return !outOfScope(actor, resource, tenant) && actorMay(authorizer, actor, resource, action, tenant);
}

/** A tenant's resource the actor's token does not reach: refused before any role is asked. */
function outOfScope(actor: Actor, resource: Resource, tenant: string | undefined): boolean {
  return tenant !== undefined && tenantScoped.has(resource) && !reachesTenant(actor, tenant);
}

/**
 * Allows the request or throws. A tenant outside the token's scope is a 404 whatever the
 * action, so a tenant-scoped token learns nothing about other tenants, not even that they exist.
 */
export function authorize(c: Context<AppEnv>, resource: Resource, action: Action, tenant?: string): Actor {
  const actor = actorOf(c);
  if (outOfScope(actor, resource, tenant)) {
    throw new ApiError(404, 'not_found', `tenant ${tenant} does not exist`);
  }
  if (!actorMay(c.get('deps').authorizer, actor, resource, action, tenant)) {
    const role = roleFor(actor, resource, tenant);
    throw new ApiError(403, 'forbidden', `role ${role} may not ${action} ${resource}${role !== actor.role && tenant ? ` in tenant ${tenant}` : ''}`);
  }
  return actor;
}
