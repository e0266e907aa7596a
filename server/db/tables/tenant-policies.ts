import type { Insertable, Selectable, Updateable } from 'kysely';

export const tenantPoliciesTable = 'tenant_policies';

export interface TenantPoliciesTable {
  tenant: string;
  body: string;
  version: number;
  updated_at: string;
}

export type TenantPoliciesRow = Selectable<TenantPoliciesTable>;
export type NewTenantPoliciesRow = Insertable<TenantPoliciesTable>;
export type TenantPoliciesRowUpdate = Updateable<TenantPoliciesTable>;
