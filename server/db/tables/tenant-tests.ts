import type { Selectable } from 'kysely';

export const tenantTestsTable = 'tenant_tests';

/** One row per tenant: its policy tests as a JSON document (`{ "tests": [...] }`). */
export interface TenantTestsTable {
  tenant: string;
  body: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export type TenantTestsRow = Selectable<TenantTestsTable>;
