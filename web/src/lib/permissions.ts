import type { Session } from '../features/auth/api/get-session.ts';

/** Inventory (tools, groups, states, MCP servers) is admin-only to change. */
export function canEditInventory(s: Session | null | undefined): boolean {
  return s?.role === 'admin';
}

/** Policy, grants and publishing of one tenant: admins, and editors scoped to it. */
export function canEditTenant(s: Session | null | undefined, tenant: string): boolean {
  return s?.role === 'admin' || (s?.role === 'editor' && s.tenants.includes(tenant));
}

/** Tenants this session may see; `null` means every tenant. */
export function visibleTenants(s: Session | null | undefined): string[] | null {
  if (!s) return [];
  return s.role === 'admin' || s.role === 'auditor' ? null : s.tenants;
}

/** The change history and its export. */
export function canReadAudit(s: Session | null | undefined): boolean {
  return s?.role === 'admin' || s?.role === 'auditor';
}
