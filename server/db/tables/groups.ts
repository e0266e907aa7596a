import type { Insertable, Selectable, Updateable } from 'kysely';

export const groupsTable = 'groups';

export interface GroupsTable {
  name: string;
  body: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export type GroupsRow = Selectable<GroupsTable>;
export type NewGroupsRow = Insertable<GroupsTable>;
export type GroupsRowUpdate = Updateable<GroupsTable>;
