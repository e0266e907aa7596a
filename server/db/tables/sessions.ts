import type { Insertable, Selectable, Updateable } from 'kysely';

export const sessionsTable = 'sessions';

/** A console session: from a token (`token_id`) or from a person signed in through single sign-on (`user_sub`). */
export interface SessionsTable {
  /** sha-256 of the session cookie value. */
  id_hash: string;
  token_id: string | null;
  user_sub: string | null;
  user_email: string | null;
  user_name: string | null;
  /** JSON of the ID-token claims the mappings are judged on. */
  user_claims: string | null;
  /** JSON SsoAccess the mappings gave when last judged (`access_checked_at`). */
  user_access: string | null;
  access_checked_at: string | null;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

export type SessionsRow = Selectable<SessionsTable>;
export type NewSessionsRow = Insertable<SessionsTable>;
export type SessionsRowUpdate = Updateable<SessionsTable>;
