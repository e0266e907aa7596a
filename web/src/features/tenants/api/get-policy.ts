import { queryOptions, useQuery } from '@tanstack/react-query';
import type { TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** The tenant's draft policy (what simulate evaluates and publish compiles). */
export async function getPolicy(tenant: string): Promise<TenantPolicy> {
  return api<TenantPolicy>(`/v1/tenants/${encodeURIComponent(tenant)}/policy`);
}

export const policyQueryOptions = (tenant: string) =>
  queryOptions({ queryKey: ['tenants', tenant, 'policy'], queryFn: () => getPolicy(tenant), refetchOnWindowFocus: false });

export function usePolicy(tenant: string) {
  return useQuery(policyQueryOptions(tenant));
}
