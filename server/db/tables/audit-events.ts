import type { Insertable, Selectable, Updateable } from 'kysely';

export const auditEventsTable = 'audit_events';

export interface AuditEventsTable {
  seq: number;
  at: string;
  actor: string;
  /** The person's email and name for a `user:` actor; null otherwise. */
  actor_email: string | null;
  actor_name: string | null;
  action: string;
  entity_type: string;
  entity_id: string;
  tenant: string | null;
  /** Canonical JSON of the entity before the change, or null. */
  before: string | null;
  after: string | null;
  reason: string | null;
  request_id: string | null;
  prev_hash: string;
  hash: string;
}

export type AuditEventsRow = Selectable<AuditEventsTable>;
export type NewAuditEventsRow = Insertable<AuditEventsTable>;
export type AuditEventsRowUpdate = Updateable<AuditEventsTable>;
