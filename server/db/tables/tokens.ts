import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export const tokensTable = 'tokens';

export interface TokensTable {
  id: string;
  label: string;
  role: string;
  /** JSON array of tenant ids; empty for admin and auditor. */
  tenants: string;
  /** sha-256 of the token; the token itself is never stored. */
  token_hash: string;
  created_at: string;
  last_used_at: string | null;
  /** ISO 8601 UTC instant after which the token no longer authenticates; null = no expiry. */
  expires_at: string | null;
  /** Optimistic-concurrency version, sent as the ETag; defaults to 1 on insert. */
  version: Generated<number>;
}

export type TokensRow = Selectable<TokensTable>;
export type NewTokensRow = Insertable<TokensTable>;
export type TokensRowUpdate = Updateable<TokensTable>;
