import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { BundlePublish } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type PublishResult = { version: number; revision: string };

/** Compiles, signs and publishes the draft (or republishes an earlier version's content with `rollbackTo`). */
export async function publish({ tenant, ...body }: BundlePublish & { tenant: string }): Promise<PublishResult> {
  return api<PublishResult>(`/v1/tenants/${encodeURIComponent(tenant)}/bundles`, { method: 'POST', body });
}

export function usePublish() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: publish,
    onSuccess: (_r, { tenant }) =>
      Promise.all([qc.invalidateQueries({ queryKey: ['tenants', tenant] }), qc.invalidateQueries({ queryKey: ['tenants', 'overview'] })]),
  });
}
