import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Bundle, ImpactReport } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/**
 * What rolling back to `version` would change in the logged traffic: the version's policy (its
 * bundle's, grants aside) replayed as an unsaved policy against the last week.
 */
export async function getRollbackImpact(tenant: string, version: number): Promise<ImpactReport> {
  const base = `/v1/tenants/${encodeURIComponent(tenant)}`;
  const bundle = await api<Bundle>(`${base}/bundles/${version}`);
  const { grants: _grants, ...policy } = bundle.policy as Bundle['policy'] & { grants?: unknown };
  return api<ImpactReport>(`${base}/impact`, { method: 'POST', body: { policy } });
}

export const rollbackImpactQueryOptions = (tenant: string, version: number | null) =>
  queryOptions({
    queryKey: ['tenants', tenant, 'rollback-impact', version],
    queryFn: () => getRollbackImpact(tenant, version!),
    enabled: version !== null,
    retry: false,
  });

export function useRollbackImpact(tenant: string, version: number | null) {
  return useQuery(rollbackImpactQueryOptions(tenant, version));
}
