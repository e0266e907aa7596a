import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Approval } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type ApprovalVerdict = { tenant: string; id: string; verdict: 'approve' | 'deny'; reason: string };

/** A person's decision on one approval request, with the reason the audit log keeps. */
export async function decideApproval({ tenant, id, verdict, reason }: ApprovalVerdict): Promise<Approval> {
  return api<Approval>(`/v1/tenants/${encodeURIComponent(tenant)}/approvals/${encodeURIComponent(id)}/${verdict}`, {
    method: 'POST',
    body: { reason: reason.trim() },
  });
}

export function useDecideApproval() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: decideApproval,
    onSettled: (_r, _e, { tenant }) => qc.invalidateQueries({ queryKey: ['tenants', tenant, 'approvals'] }),
  });
}
