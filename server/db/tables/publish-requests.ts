import type { Insertable, Selectable } from 'kysely';

export const publishRequestsTable = 'publish_requests';

/** A publish under review (migration 011). JSON columns hold canonical JSON. */
export interface PublishRequestsTable {
  id: string;
  tenant: string;
  /** `pending`, `published` or `rejected`. */
  status: string;
  revision: string;
  rollback_to: number | null;
  /** The latest published version when asked; null before the first publish. */
  based_on: number | null;
  /** The compiled bundle reviewed (envelope aside); null for a rollback, whose content is a stored version's. */
  content: string | null;
  /** `{ diff, impact, tests }` as the reviewer saw them. */
  review: string;
  /** The policy-test failures an admin chose to publish past (JSON), or null. */
  forced: string | null;
  requested_by: string;
  requested_by_email: string | null;
  /** How the console names the requester (a token's label, a person's name). */
  requested_by_label: string | null;
  requested_at: string;
  reason: string;
  decided_by: string | null;
  decided_by_email: string | null;
  decided_by_label: string | null;
  decided_at: string | null;
  decision_reason: string | null;
  published_version: number | null;
}

export type PublishRequestsRow = Selectable<PublishRequestsTable>;
export type NewPublishRequestsRow = Insertable<PublishRequestsTable>;
