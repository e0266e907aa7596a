import type { Approval, ApprovalQuery, ApprovalReceiptPayload, ApprovalState } from '../../policy-schemas/types.gen.ts';
import type { DbOrTx, ToolgateDatabase } from '../db/database.ts';
import type { ApprovalRequestsRow, NewApprovalRequestsRow } from '../db/tables/approval-requests.ts';

/** What an approval request's audit events record: everything but the arguments (audit exports are forever). */
export function auditView(a: Approval): Record<string, unknown> {
  const { arguments: _args, receipt, ...rest } = a;
  return { ...rest, ...(receipt ? { receipt: { payload: receipt.payload } } : {}) };
}

/** The API view of a row; `withArguments` only for those who may see them (deciders, the requester). */
export function toApproval(r: ApprovalRequestsRow, withArguments: boolean): Approval {
  const a: Approval = {
    id: r.id,
    tenant: r.tenant,
    subject: r.subject,
    tool: r.tool,
    argumentsDigest: r.arguments_digest,
    reason: r.reason,
    bundleVersion: r.bundle_version === null ? null : Number(r.bundle_version),
    requestedAt: r.requested_at,
    expiresAt: r.expires_at,
    requestedBy: r.requested_by,
    state: r.state,
  };
  if (r.tool_call_id !== null) a.toolCallId = r.tool_call_id;
  if (withArguments && r.arguments !== null) a.arguments = JSON.parse(r.arguments) as Record<string, unknown>;
  if (r.decided_by !== null) a.decidedBy = r.decided_by;
  if (r.decided_at !== null) a.decidedAt = r.decided_at;
  if (r.decision_reason !== null) a.decisionReason = r.decision_reason;
  if (r.receipt_payload !== null && r.receipt_signature !== null) {
    a.receipt = { payload: JSON.parse(r.receipt_payload) as ApprovalReceiptPayload, signature: r.receipt_signature };
  }
  return a;
}

export async function insertApproval(db: DbOrTx, row: NewApprovalRequestsRow): Promise<void> {
  await db.insertInto('approval_requests').values(row).execute();
}

export async function getApproval(db: DbOrTx, tenant: string, id: string): Promise<ApprovalRequestsRow | undefined> {
  return db.selectFrom('approval_requests').selectAll().where('tenant', '=', tenant).where('id', '=', id).executeTakeFirst();
}

/** Pending, unexpired requests opened by one actor (the flood bound counts these). */
export async function countPendingBy(db: DbOrTx, requestedBy: string, now: string): Promise<number> {
  const row = await db
    .selectFrom('approval_requests')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('requested_by', '=', requestedBy)
    .where('state', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Marks pending requests past their expiry as expired and deletes their arguments. Runs before
 * every read and on a timer, so arguments never outlive a request by more than one sweep.
 */
export async function expireDue(database: ToolgateDatabase, now: string): Promise<number> {
  const due = await database.db
    .selectFrom('approval_requests')
    .select('id')
    .where('state', '=', 'pending')
    .where('expires_at', '<=', now)
    .limit(1)
    .executeTakeFirst();
  if (!due) return 0;
  return database.change(async (tx) => {
    const r = await tx
      .updateTable('approval_requests')
      .set({ state: 'expired', arguments: null })
      .where('state', '=', 'pending')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  });
}

/** A page of a tenant's requests, newest first, filtered by state (`decided` = approved or denied). */
export async function listApprovals(db: DbOrTx, tenant: string, q: ApprovalQuery, limit: number): Promise<ApprovalRequestsRow[]> {
  let query = db.selectFrom('approval_requests').selectAll().where('tenant', '=', tenant);
  if (q.state === 'decided') query = query.where('state', 'in', ['approved', 'denied']);
  else if (q.state) query = query.where('state', '=', q.state as ApprovalState);
  if (q.cursor) {
    const at = q.cursor.slice(0, 24);
    const id = q.cursor.slice(25);
    query = query.where((eb) => eb.or([eb('requested_at', '<', at), eb.and([eb('requested_at', '=', at), eb('id', '<', id)])]));
  }
  return query.orderBy('requested_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export function cursorOf(r: ApprovalRequestsRow): string {
  return `${r.requested_at}_${r.id}`;
}

/** Records a decision on a still-pending, unexpired request; false when it was decided or expired meanwhile. */
export async function recordDecision(
  db: DbOrTx,
  tenant: string,
  id: string,
  decision: {
    state: 'approved' | 'denied';
    decidedBy: string;
    decidedAt: string;
    reason: string;
    receipt?: { payload: string; signature: string };
  },
): Promise<boolean> {
  const r = await db
    .updateTable('approval_requests')
    .set({
      state: decision.state,
      decided_by: decision.decidedBy,
      decided_at: decision.decidedAt,
      decision_reason: decision.reason,
      arguments: null,
      receipt_payload: decision.receipt?.payload ?? null,
      receipt_signature: decision.receipt?.signature ?? null,
    })
    .where('tenant', '=', tenant)
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .where('expires_at', '>', decision.decidedAt)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
