import type { Selectable } from 'kysely';

export const ssoLoginsTable = 'sso_logins';

/** A sign-in sent to the identity provider and not yet back; used once, then deleted. */
export interface SsoLoginsTable {
  /** sha-256 of the `state` sent to the provider. */
  state_hash: string;
  nonce: string;
  /** PKCE verifier; only its challenge left the server. */
  code_verifier: string;
  /** The client address (IPv6: its /64) that started it; null for rows from before migration 013. */
  client_address: string | null;
  created_at: string;
  expires_at: string;
}

export type SsoLoginsRow = Selectable<SsoLoginsTable>;
