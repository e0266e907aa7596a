import type { AllowedActions } from '../../../policy-schemas/types.gen.ts';
import type { Session } from '../features/auth/api/get-session.ts';

// The server decides what a session may do (GET /v1/session answers `permissions`, by the rules the
// API enforces); these helpers only read that answer, so the console keeps no role rules of its own.

type Resource = keyof AllowedActions & string;
type Action = AllowedActions[string][number];

/** Whether the session reaches a tenant at all. */
function reaches(s: Session, tenant: string): boolean {
  return s.permissions.everyTenant || s.tenants.includes(tenant) || tenant in s.permissions.tenants;
}

/** Whether the session may act on a resource; with a tenant, on that tenant's (`false` outside its reach). */
export function may(s: Session | null | undefined, resource: Resource, action: Action, tenant?: string): boolean {
  if (!s) return false;
  if (tenant !== undefined && !reaches(s, tenant)) return false;
  const allowed = (tenant !== undefined ? s.permissions.tenants[tenant] : undefined) ?? s.permissions.actions;
  return allowed[resource]?.includes(action) ?? false;
}

/** Inventory (tools, groups, states, MCP servers) changes. */
export function canEditInventory(s: Session | null | undefined): boolean {
  return may(s, 'inventory', 'write');
}

/** Policy, grants and publishing of one tenant. */
export function canEditTenant(s: Session | null | undefined, tenant: string): boolean {
  return may(s, 'policy', 'write', tenant);
}

/** Tenants this session may see; `null` means every tenant. */
export function visibleTenants(s: Session | null | undefined): string[] | null {
  if (!s) return [];
  return s.permissions.everyTenant ? null : s.tenants;
}

/** The change history and its export. */
export function canReadAudit(s: Session | null | undefined): boolean {
  return may(s, 'audit', 'read');
}
