import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { PublishRequest } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type Decision = { tenant: string; id: string; verdict: 'approve' | 'reject'; reason: string };

/** Approves (publishing exactly the reviewed content) or rejects a publish request. */
export async function decidePublishRequest({ tenant, id, verdict, reason }: Decision): Promise<PublishRequest> {
  const body = reason.trim() ? { reason: reason.trim() } : {};
  return api<PublishRequest>(`/v1/tenants/${encodeURIComponent(tenant)}/publish-requests/${encodeURIComponent(id)}/${verdict}`, { method: 'POST', body });
}

export function useDecidePublishRequest() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: decidePublishRequest,
    onSettled: (_r, _e, { tenant }) =>
      Promise.all([qc.invalidateQueries({ queryKey: ['tenants', tenant] }), qc.invalidateQueries({ queryKey: ['tenants', 'overview'] })]),
  });
}
