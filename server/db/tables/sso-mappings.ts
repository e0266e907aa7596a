import type { Selectable } from 'kysely';

export const ssoMappingsTable = 'sso_mappings';

/** One claim→role mapping for single sign-on, kept as a JSON document like groups and states. */
export interface SsoMappingsTable {
  id: string;
  body: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export type SsoMappingsRow = Selectable<SsoMappingsTable>;
