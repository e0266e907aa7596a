import { queryOptions, useQuery } from '@tanstack/react-query';
import type { ImpactReport } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** What the saved draft would change in the logged traffic of the last 7 days. */
export async function getImpact(tenant: string): Promise<ImpactReport> {
  return api<ImpactReport>(`/v1/tenants/${encodeURIComponent(tenant)}/impact`, { method: 'POST', body: {} });
}

/** Keyed by the draft's policy version, so a saved edit asks again. */
export const impactQueryOptions = (tenant: string, policyVersion: number | undefined) =>
  queryOptions({
    queryKey: ['tenants', tenant, 'impact', policyVersion],
    queryFn: () => getImpact(tenant),
    enabled: policyVersion !== undefined,
    retry: false,
  });

export function useImpact(tenant: string, policyVersion: number | undefined) {
  return useQuery(impactQueryOptions(tenant, policyVersion));
}
