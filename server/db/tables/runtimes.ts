import type { Insertable, Selectable, Updateable } from 'kysely';

export const runtimesTable = 'runtimes';

export interface RuntimesTable {
  tenant: string;
  runtime_id: string;
  version: number | null;
  revision: string | null;
  health: string;
  last_error: string | null;
  /** Added by migration 002: the runtime's note on last_error. */
  detail: string | null;
  reported_at: string;
}

export type RuntimesRow = Selectable<RuntimesTable>;
export type NewRuntimesRow = Insertable<RuntimesTable>;
export type RuntimesRowUpdate = Updateable<RuntimesTable>;
