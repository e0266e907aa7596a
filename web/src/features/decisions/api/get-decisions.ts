import { infiniteQueryOptions, queryOptions, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import type { DecisionQuery, DecisionSummary, StoredDecision } from '../../../../../policy-schemas/types.gen.ts';
import { api, query } from '../../../lib/api-client.ts';

export type DecisionFilters = Omit<DecisionQuery, 'cursor' | 'limit' | 'format'>;
export const PAGE = 100;
type DecisionPage = { items: StoredDecision[]; nextCursor: string | null };

const path = (tenant: string) => `/v1/tenants/${encodeURIComponent(tenant)}/decisions`;

/** One page of a tenant's decision records, newest first. */
export async function getDecisions(tenant: string, filters: DecisionFilters, cursor?: string): Promise<DecisionPage> {
  return api<DecisionPage>(`${path(tenant)}${query({ ...filters, cursor, limit: PAGE })}`);
}

export const decisionsQueryOptions = (tenant: string, filters: DecisionFilters) =>
  infiniteQueryOptions({
    queryKey: ['tenants', tenant, 'decisions', 'list', filters],
    queryFn: ({ pageParam }) => getDecisions(tenant, filters, pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });

export function useDecisions(tenant: string, filters: DecisionFilters) {
  return useInfiniteQuery(decisionsQueryOptions(tenant, filters));
}

/** The histogram, the most denied tools and subjects, and the counters, for the same filters. */
export async function getDecisionSummary(tenant: string, filters: DecisionFilters): Promise<DecisionSummary> {
  return api<DecisionSummary>(`${path(tenant)}/summary${query(filters)}`);
}

export const decisionSummaryQueryOptions = (tenant: string, filters: DecisionFilters) =>
  queryOptions({ queryKey: ['tenants', tenant, 'decisions', 'summary', filters], queryFn: () => getDecisionSummary(tenant, filters) });

export function useDecisionSummary(tenant: string, filters: DecisionFilters) {
  return useQuery(decisionSummaryQueryOptions(tenant, filters));
}

/** The export URL for the current filters (downloaded through the session cookie). */
export function decisionExportPath(tenant: string, filters: DecisionFilters, format: 'csv' | 'jsonl'): string {
  return `${path(tenant)}/export${query({ ...filters, format })}`;
}
