import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { BundlePublish, PublishRequest } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type PublishResult = { version: number; revision: string };

/**
 * Compiles, signs and publishes the draft (or republishes an earlier version's content with
 * `rollbackTo`). Under the tenant's review rule the answer is a publish request instead (202).
 */
export async function publish({ tenant, ...body }: BundlePublish & { tenant: string }): Promise<PublishResult | PublishRequest> {
  return api<PublishResult | PublishRequest>(`/v1/tenants/${encodeURIComponent(tenant)}/bundles`, { method: 'POST', body });
}

/** True when a publish answered with a request for review rather than a version. */
export function isPublishRequest(r: PublishResult | PublishRequest): r is PublishRequest {
  return 'status' in r && 'requestedBy' in r;
}

export function usePublish() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: publish,
    onSuccess: (_r, { tenant }) =>
      Promise.all([qc.invalidateQueries({ queryKey: ['tenants', tenant] }), qc.invalidateQueries({ queryKey: ['tenants', 'overview'] })]),
  });
}
