import { queryOptions, useQueries, useQuery } from '@tanstack/react-query';
import type { PublishRequest } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type { PublishRequest };

/** A tenant's publish requests, newest first; `status` narrows them (`pending` is the review queue). */
export async function getPublishRequests(tenant: string, status?: PublishRequest['status']): Promise<PublishRequest[]> {
  const q = status ? `?status=${status}` : '';
  return (await api<{ items: PublishRequest[] }>(`/v1/tenants/${encodeURIComponent(tenant)}/publish-requests${q}`)).items;
}

export const publishRequestsQueryOptions = (tenant: string, status?: PublishRequest['status']) =>
  queryOptions({ queryKey: ['tenants', tenant, 'publish-requests', status ?? 'all'], queryFn: () => getPublishRequests(tenant, status) });

export function usePublishRequests(tenant: string, status?: PublishRequest['status']) {
  return useQuery(publishRequestsQueryOptions(tenant, status));
}

/** The pending requests of several tenants at once (the queue on Home). */
export function usePendingRequests(tenants: string[]) {
  // Someone else asks: the queue looks again every half minute while it is on screen.
  return useQueries({ queries: tenants.map((t) => ({ ...publishRequestsQueryOptions(t, 'pending'), refetchInterval: 30_000 })) });
}

export async function getPublishRequest(tenant: string, id: string): Promise<PublishRequest> {
  return api<PublishRequest>(`/v1/tenants/${encodeURIComponent(tenant)}/publish-requests/${encodeURIComponent(id)}`);
}

export const publishRequestQueryOptions = (tenant: string, id: string) =>
  queryOptions({ queryKey: ['tenants', tenant, 'publish-requests', 'one', id], queryFn: () => getPublishRequest(tenant, id), retry: false });

export function usePublishRequest(tenant: string, id: string) {
  return useQuery(publishRequestQueryOptions(tenant, id));
}
