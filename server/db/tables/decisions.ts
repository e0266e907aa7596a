import type { Generated, Insertable, Selectable } from 'kysely';

export interface DecisionsTable {
  id: Generated<number>;
  tenant: string;
  runtime_id: string;
  at: string;
  received_at: string;
  tool_call_id: string;
  subject: string;
  tool: string;
  decision: string;
  error_code: string | null;
  reason: string | null;
  bundle_version: number | null;
  revision: string | null;
  /** Canonical JSON of the evaluation request behind the call. */
  request: string;
  request_hash: string;
  /** The approval that let the call through (its request id and who gave it); null for most calls. */
  approval_id: string | null;
  approval_by: string | null;
  /** The argument constraint that decided the call (role, position, otherwise, reason); null when none did. */
  constraint_role: string | null;
  constraint_index: number | null;
  constraint_otherwise: string | null;
  constraint_reason: string | null;
}

export interface DecisionSourcesTable {
  tenant: string;
  runtime_id: string;
  received: number;
  /** Records the runtime's ring dropped, as it last reported (cumulative since it started). */
  dropped: number;
  last_batch_at: string;
}

export interface DecisionStatsTable {
  tenant: string;
  stored: number;
  /** Records removed to keep the tenant under its cap. */
  evicted: number;
  /** Records removed by retention. */
  expired: number;
}

export type DecisionsRow = Selectable<DecisionsTable>;
export type NewDecisionsRow = Insertable<DecisionsTable>;
