import { queryOptions, useQuery } from '@tanstack/react-query';
import type { PolicyTests } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** The tenant's policy tests, with their version (sent back as If-Match on save). */
export async function getTests(tenant: string): Promise<PolicyTests> {
  return api<PolicyTests>(`/v1/tenants/${encodeURIComponent(tenant)}/tests`);
}

export const testsQueryOptions = (tenant: string) =>
  queryOptions({ queryKey: ['tenants', tenant, 'tests'], queryFn: () => getTests(tenant), refetchOnWindowFocus: false });

export function useTests(tenant: string) {
  return useQuery(testsQueryOptions(tenant));
}
