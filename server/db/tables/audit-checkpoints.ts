import type { Selectable } from 'kysely';

export interface AuditCheckpointsTable {
  /** The last event the checkpoint covers. */
  seq: number;
  hash: string;
  at: string;
  kid: string;
  /** Detached JWS over the RFC 8785 bytes of `{ format, seq, hash, at }`. */
  signature: string;
}

export type AuditCheckpointsRow = Selectable<AuditCheckpointsTable>;
