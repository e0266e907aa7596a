import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api-client.ts';

/** A runtime's last report, as GET …/runtimes lists it (no entity schema; fields read tolerantly). */
export type RuntimeStatus = {
  runtimeId?: string;
  id?: string;
  version?: number | null;
  health?: 'fresh' | 'stale' | 'none' | string;
  reportedAt?: string;
  lastSeenAt?: string;
  error?: string | null;
  reason?: string | null;
};

export async function getRuntimes(tenant: string): Promise<RuntimeStatus[]> {
  const res = await api<{ items: RuntimeStatus[] } | RuntimeStatus[]>(`/v1/tenants/${encodeURIComponent(tenant)}/runtimes`);
  return Array.isArray(res) ? res : res.items;
}

export const runtimesQueryOptions = (tenant: string) =>
  queryOptions({ queryKey: ['tenants', tenant, 'runtimes'], queryFn: () => getRuntimes(tenant), refetchInterval: 15000 });

export function useRuntimes(tenant: string) {
  return useQuery(runtimesQueryOptions(tenant));
}
