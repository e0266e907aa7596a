import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api-client.ts';

export type PublishResult = { version: number; revision: string };

/** Compiles, signs and publishes the draft (or re-publishes an old version's content with `rollbackTo`). */
export async function publish({ tenant, reason, rollbackTo }: { tenant: string; reason: string; rollbackTo?: number }): Promise<PublishResult> {
  return api<PublishResult>(`/v1/tenants/${encodeURIComponent(tenant)}/bundles`, {
    method: 'POST',
    body: rollbackTo === undefined ? { reason } : { reason, rollbackTo },
    reason,
  });
}

export function usePublish() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: publish, onSuccess: (_r, { tenant }) => qc.invalidateQueries({ queryKey: ['tenants', tenant] }) });
}
