import type { Insertable, Selectable, Updateable } from 'kysely';

export const tenantsTable = 'tenants';

export interface TenantsTable {
  id: string;
  name: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export type TenantsRow = Selectable<TenantsTable>;
export type NewTenantsRow = Insertable<TenantsTable>;
export type TenantsRowUpdate = Updateable<TenantsTable>;
