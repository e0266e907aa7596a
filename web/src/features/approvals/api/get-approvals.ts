import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Approval } from '../../../../../policy-schemas/types.gen.ts';
import { api, query } from '../../../lib/api-client.ts';

export type { Approval };

const path = (tenant: string) => `/v1/tenants/${encodeURIComponent(tenant)}/approvals`;

/** A tenant's pending approval requests, newest first (the queue a person decides). */
export async function getPendingApprovals(tenant: string): Promise<Approval[]> {
  const items: Approval[] = [];
  let cursor: string | undefined;
  do {
    const page = await api<{ items: Approval[]; nextCursor: string | null }>(`${path(tenant)}${query({ state: 'pending', limit: 100, cursor })}`);
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && items.length < 1000);
  return items;
}

export const pendingApprovalsQueryOptions = (tenant: string) =>
  queryOptions({
    queryKey: ['tenants', tenant, 'approvals', 'pending'],
    queryFn: () => getPendingApprovals(tenant),
    // New requests arrive while the page is open: the queue refreshes itself.
    refetchInterval: 5_000,
  });

export function usePendingApprovals(tenant: string) {
  return useQuery(pendingApprovalsQueryOptions(tenant));
}
