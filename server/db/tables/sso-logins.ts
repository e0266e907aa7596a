import type { Selectable } from 'kysely';

export const ssoLoginsTable = 'sso_logins';

/** A sign-in sent to the identity provider and not yet back; used once, then deleted. */
export interface SsoLoginsTable {
  /** sha-256 of the `state` sent to the provider. */
  state_hash: string;
  nonce: string;
  /** PKCE verifier; only its challenge left the server. */
  code_verifier: string;
  created_at: string;
  expires_at: string;
}

export type SsoLoginsRow = Selectable<SsoLoginsTable>;
