import type { Session } from '../features/auth/api/get-session.ts';

/** Inventory (tools, groups, states, MCP servers) is admin-only to change. */
export function canEditInventory(s: Session | null | undefined): boolean {
  return s?.role === 'admin';
}

/** Policy, grants and publishing of one tenant: admins, and editors scoped to it. */
export function canEditTenant(s: Session | null | undefined, tenant: string): boolean {
  // A person signed in through single sign-on may edit one tenant and only view another.
  const role = s?.tenantRoles?.[tenant] ?? s?.role;
  return s?.role === 'admin' || (role === 'editor' && (s?.tenants.includes(tenant) || s?.role === 'auditor'));
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
