import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Runtime } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type Fleet = { latest: { version: number; revision: string } | null; runtimes: Runtime[] };

/** The tenant's runtimes with their last report, and the latest published version to compare with. */
export async function getRuntimes(tenant: string): Promise<Fleet> {
  return api<Fleet>(`/v1/tenants/${encodeURIComponent(tenant)}/runtimes`);
}

export const runtimesQueryOptions = (tenant: string) =>
  queryOptions({ queryKey: ['tenants', tenant, 'runtimes'], queryFn: () => getRuntimes(tenant), refetchInterval: 15000 });

export function useRuntimes(tenant: string) {
  return useQuery(runtimesQueryOptions(tenant));
}
