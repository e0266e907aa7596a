import type { Insertable, Selectable, Updateable } from 'kysely';

export const bundlesTable = 'bundles';

export interface BundlesTable {
  tenant: string;
  version: number;
  revision: string;
  /** The exact bytes of bundle.json (canonical JSON text). */
  content: string;
  /** Detached compact JWS over content. */
  signature: string;
  kid: string;
  published_by: string;
  published_at: string;
  reason: string | null;
  /** JSON: counts and changes shown in the version list. */
  summary: string;
  rollback_of: number | null;
}

export type BundlesRow = Selectable<BundlesTable>;
export type NewBundlesRow = Insertable<BundlesTable>;
export type BundlesRowUpdate = Updateable<BundlesTable>;
