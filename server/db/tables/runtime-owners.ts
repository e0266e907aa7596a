import type { Insertable, Selectable } from 'kysely';

export const runtimeOwnersTable = 'runtime_owners';

/** Which token first reported under a runtime id of a tenant (migration 012): only it may report as that runtime. */
export interface RuntimeOwnersTable {
  tenant: string;
  runtime_id: string;
  token_id: string;
  claimed_at: string;
}

export type RuntimeOwnersRow = Selectable<RuntimeOwnersTable>;
export type NewRuntimeOwnersRow = Insertable<RuntimeOwnersTable>;
