import { infiniteQueryOptions, queryOptions, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import type { AuditEvent, AuditQuery, AuditVerification } from '../../../../../policy-schemas/types.gen.ts';
import { api, query } from '../../../lib/api-client.ts';

export type AuditFilters = Omit<AuditQuery, 'cursor' | 'limit' | 'format' | 'order'>;
/** Events come newest first, in keyset pages by seq. */
export const PAGE = 200;
type AuditPage = { items: AuditEvent[]; nextCursor: string | null };

export async function getAudit(filters: AuditFilters, cursor?: string): Promise<AuditPage> {
  return api<AuditPage>(`/v1/audit${query({ ...filters, cursor, limit: PAGE, order: 'desc' })}`);
}

export const auditQueryOptions = (filters: AuditFilters) =>
  infiniteQueryOptions({
    queryKey: ['audit', 'list', filters],
    queryFn: ({ pageParam }) => getAudit(filters, pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });

export function useAudit(filters: AuditFilters) {
  return useInfiniteQuery(auditQueryOptions(filters));
}

export type { AuditVerification };

export async function verifyAudit(): Promise<AuditVerification> {
  return api<AuditVerification>('/v1/audit/verify');
}

export const auditVerifyQueryOptions = () => queryOptions({ queryKey: ['audit', 'verify'], queryFn: verifyAudit });

export function useAuditVerification() {
  return useQuery(auditVerifyQueryOptions());
}

/** The export URL for the current filters (downloaded through the session cookie). */
export function auditExportPath(filters: AuditFilters, format: 'csv' | 'jsonl'): string {
  return `/v1/audit/export${query({ ...filters, format })}`;
}
