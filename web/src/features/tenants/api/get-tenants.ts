import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Tenant } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export async function getTenants(): Promise<Tenant[]> {
  return (await api<{ items: Tenant[] }>('/v1/tenants')).items;
}

export const tenantsQueryOptions = () => queryOptions({ queryKey: ['tenants', 'list'], queryFn: getTenants });

export function useTenants() {
  return useQuery(tenantsQueryOptions());
}
