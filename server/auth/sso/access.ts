import type { SsoAccess, SsoMapping } from '../../../policy-schemas/types.gen.ts';
import { claimMatches, countedClaims } from '../../../runtime/claim-match.ts';

type TenantRole = 'editor' | 'viewer';

// The claim rule is shared with the gateway's OAuth client mappings.
export { claimMatches, countedClaims };

/**
 * What a person's claims give under the mappings. A session holds one role and a set of tenants,
 * so several matches fold into that shape:
 * - any admin mapping: admin of everything (nothing is stronger);
 * - else any auditor mapping: auditor (reads every tenant), plus editor where an editor mapping
 *   names a tenant (`tenantRoles`; viewer there adds nothing to what an auditor reads);
 * - else editor/viewer: the union of the tenants, each with the strongest role any mapping gives
 *   it (`tenantRoles`), and `role` = the strongest of those, which decides the requests that name
 *   no tenant (listing tenants, reading the inventory: the same for editor and viewer).
 * No match: no access, and the sign-in is refused. Only countedClaims are judged.
 */
export function accessFor(claims: Record<string, unknown>, mappings: readonly SsoMapping[]): SsoAccess {
  const counted = countedClaims(claims);
  const matched = mappings.filter((m) => claimMatches(counted, m)).sort((a, b) => a.id.localeCompare(b.id));
  const ids = matched.map((m) => m.id);
  if (matched.length === 0) return { access: false, role: null, tenants: [], tenantRoles: {}, mappings: [] };
  const tenantRoles: Record<string, TenantRole> = {};
  for (const m of matched) {
    if (m.role !== 'editor' && m.role !== 'viewer') continue;
    for (const t of m.tenants ?? []) if (tenantRoles[t] !== 'editor') tenantRoles[t] = m.role;
  }
  if (matched.some((m) => m.role === 'admin')) return { access: true, role: 'admin', tenants: null, tenantRoles: {}, mappings: ids };
  if (matched.some((m) => m.role === 'auditor')) {
    const editorOnly = Object.fromEntries(Object.entries(tenantRoles).filter(([, r]) => r === 'editor'));
    return { access: true, role: 'auditor', tenants: null, tenantRoles: sortKeys(editorOnly), mappings: ids };
  }
  const tenants = Object.keys(tenantRoles).sort();
  const role: TenantRole = Object.values(tenantRoles).includes('editor') ? 'editor' : 'viewer';
  return { access: true, role, tenants, tenantRoles: sortKeys(tenantRoles), mappings: ids };
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
