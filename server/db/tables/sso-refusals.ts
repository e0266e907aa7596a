import type { Selectable } from 'kysely';

/** When a refused single sign-on of a subject was last written to the audit trail. */
export interface SsoRefusalsTable {
  /** sha-256 of the ID token's `sub`. */
  subject_hash: string;
  audited_at: string;
}

export type SsoRefusalsRow = Selectable<SsoRefusalsTable>;
