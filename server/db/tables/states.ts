import type { Insertable, Selectable, Updateable } from 'kysely';

export const statesTable = 'states';

export interface StatesTable {
  name: string;
  body: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export type StatesRow = Selectable<StatesTable>;
export type NewStatesRow = Insertable<StatesTable>;
export type StatesRowUpdate = Updateable<StatesTable>;
