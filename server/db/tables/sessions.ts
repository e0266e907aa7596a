import type { Insertable, Selectable, Updateable } from 'kysely';

export const sessionsTable = 'sessions';

export interface SessionsTable {
  /** sha-256 of the session cookie value. */
  id_hash: string;
  token_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

export type SessionsRow = Selectable<SessionsTable>;
export type NewSessionsRow = Insertable<SessionsTable>;
export type SessionsRowUpdate = Updateable<SessionsTable>;
