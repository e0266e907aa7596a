import { queryOptions, useQuery } from '@tanstack/react-query';
import type { ConnectionGrant } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export async function getGrants(tenant: string): Promise<ConnectionGrant[]> {
  return (await api<{ items: ConnectionGrant[] }>(`/v1/tenants/${encodeURIComponent(tenant)}/grants`)).items;
}

export const grantsQueryOptions = (tenant: string) => queryOptions({ queryKey: ['tenants', tenant, 'grants'], queryFn: () => getGrants(tenant) });

export function useGrants(tenant: string) {
  return useQuery(grantsQueryOptions(tenant));
}
