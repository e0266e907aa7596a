import type { CallDecision, ToolCall, ToolView } from './decide.ts';

/** Who gave an approval: a person out of band, or (where the role allows it) the MCP client itself. */
export type ApprovalBy = 'person' | 'client';

/**
 * The call an approval must be for: everything the person approved, as the runtime is about to run
 * it, and the connection it runs under (a receipt names none; a runtime that asked remembers it).
 */
export type ApprovedCall = { tenant: string; subject: string; tool: string; arguments: unknown; connectionId?: string };

export type ApprovalRedemption = { ok: true; id: string; by: ApprovalBy } | { ok: false; message: string };

/**
 * Evidence that a call needing approval was approved (a receipt: see approval-receipt.ts), checked
 * by decide() against the exact call and used up when it lets that call through.
 */
export type CallApproval = { redeem(call: ApprovedCall): ApprovalRedemption };

/** A receipt's lifetime when the role sets none (DESIGN: `approvals.validForSeconds`, default 900). */
export const DEFAULT_APPROVAL_VALID_SECONDS = 900;

/**
 * How a subject's roles take approvals. A client's own confirmation counts only when every one of
 * the subject's roles says `by: "client"` (a person is the default and the stronger answer); a
 * receipt lives as long as the shortest `validForSeconds` among them.
 */
export function approvalSettings(
  policy: { roles?: Record<string, object> } | undefined,
  roles: readonly string[],
): { by: ApprovalBy; validForSeconds: number } {
  let byClient = roles.length > 0;
  let validForSeconds = Number.POSITIVE_INFINITY;
  for (const name of roles) {
    // Role names are data (R1.1): a role named `constructor` is the policy's own member or none.
    const role = policy?.roles && Object.hasOwn(policy.roles, name) ? policy.roles[name] : undefined;
    const approvals = (role as { approvals?: { by?: ApprovalBy; validForSeconds?: number } } | undefined)?.approvals;
    if (approvals?.by !== 'client') byClient = false;
    validForSeconds = Math.min(validForSeconds, approvals?.validForSeconds ?? DEFAULT_APPROVAL_VALID_SECONDS);
  }
  return { by: byClient ? 'client' : 'person', validForSeconds: Number.isFinite(validForSeconds) ? validForSeconds : DEFAULT_APPROVAL_VALID_SECONDS };
}

/**
 * Which rule asked for approval, as the approval request and its deciders see it (never the
 * arguments), and the connection the call runs under, so the person sees which account it acts through.
 */
export function approvalReason(view: ToolView, decided: CallDecision, toolId: string, connectionId?: string): string {
  let reason: string;
  if (decided.constraint) reason = `constraint ${decided.constraint.role}#${decided.constraint.index}: ${decided.constraint.reason}`;
  else {
    const effect = view.loaded.byId.get(toolId)?.effect ?? undefined;
    const roles = view.subject.roles.filter((r) => effect !== undefined && view.loaded.roles.get(r)?.requireApproval.has(effect) === true);
    reason = `${effect ?? 'this'} calls need approval (role ${roles.join(', ') || view.subject.roles.join(', ')})`;
  }
  const through = connectionId === undefined ? '' : ` (through connection ${connectionId})`;
  // An approval request's reason holds at most 500 characters; the connection is kept whole.
  return reason.length + through.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1 - through.length)}…${through}` : `${reason}${through}`;
}

const MAX_REASON = 500;

/**
 * A require_approval decision with approval evidence (`args`: the call's arguments as decide read
 * them, `{}` when absent): allowed once when the evidence holds for this exact call (and a client's confirmation only where the roles take one), else `approval_invalid`.
 */
export function redeemApproval(view: ToolView, call: ToolCall, args: unknown, decided: CallDecision, approval: CallApproval): CallDecision {
  const redeemed = approval.redeem({
    tenant: view.loaded.bundle.tenant,
    subject: view.request.subject,
    tool: call.name,
    arguments: args,
    ...(call.connectionId !== undefined ? { connectionId: call.connectionId } : {}),
  });
  const { toolCallId } = decided;
  if (!redeemed.ok)
    return {
      toolCallId,
      decision: 'deny',
      errorCode: 'approval_invalid',
      message: redeemed.message,
      ...(decided.constraint ? { constraint: decided.constraint } : {}),
    };
  if (redeemed.by === 'client' && !takesClientConfirmation(view)) {
    return {
      toolCallId,
      decision: 'deny',
      errorCode: 'approval_invalid',
      message: `${call.name} needs a person's approval; the client's own confirmation does not count for this role`,
    };
  }
  return { toolCallId, decision: 'allow', approval: { id: redeemed.id, by: redeemed.by }, ...(decided.constraint ? { constraint: decided.constraint } : {}) };
}

/**
 * approvalSettings' `by: "client"` rule on the roles loadBundle read once (their approvals with
 * defaults filled in), not on the raw policy again at every redemption: every one of the
 * subject's roles must take a client's confirmation.
 */
function takesClientConfirmation(view: ToolView): boolean {
  const roles = view.subject.roles;
  return roles.length > 0 && roles.every((name) => view.loaded.roles.get(name)?.approvals.by === 'client');
}
