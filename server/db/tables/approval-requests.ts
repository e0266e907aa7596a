import type { Insertable, Selectable } from 'kysely';

export const approvalRequestsTable = 'approval_requests';

export interface ApprovalRequestsTable {
  id: string;
  tenant: string;
  subject: string;
  tool: string;
  arguments_digest: string;
  /** Canonical JSON of the arguments while pending; null once decided or expired. */
  arguments: string | null;
  reason: string;
  bundle_version: number | null;
  tool_call_id: string | null;
  /** The audit actor that opened it: never the one that may decide it. */
  requested_by: string;
  requested_at: string;
  expires_at: string;
  state: 'pending' | 'approved' | 'denied' | 'expired';
  decided_by: string | null;
  decided_at: string | null;
  decision_reason: string | null;
  receipt_payload: string | null;
  receipt_signature: string | null;
}

export type ApprovalRequestsRow = Selectable<ApprovalRequestsTable>;
export type NewApprovalRequestsRow = Insertable<ApprovalRequestsTable>;
