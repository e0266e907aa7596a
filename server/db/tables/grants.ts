import type { Insertable, Selectable, Updateable } from 'kysely';

export const grantsTable = 'grants';

export interface GrantsTable {
  tenant: string;
  connection_id: string;
  body: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export type GrantsRow = Selectable<GrantsTable>;
export type NewGrantsRow = Insertable<GrantsTable>;
export type GrantsRowUpdate = Updateable<GrantsTable>;
