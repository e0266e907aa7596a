import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api-client.ts';

/**
 * One published version as GET /v1/tenants/:tenant/bundles lists it. No schema describes this
 * listing yet, so only what the console shows is named, and every field but `version` is optional.
 */
export type BundleVersion = {
  version: number;
  revision?: string;
  previousRevision?: string | null;
  issuedAt?: string;
  publishedAt?: string;
  expiresAt?: string;
  actor?: string;
  publishedBy?: string;
  reason?: string | null;
  rollbackOf?: number;
  rollbackTo?: number;
  summary?: unknown;
};

export async function getBundles(tenant: string): Promise<BundleVersion[]> {
  const res = await api<{ items: BundleVersion[] } | BundleVersion[]>(`/v1/tenants/${encodeURIComponent(tenant)}/bundles`);
  const items = Array.isArray(res) ? res : res.items;
  return [...items].sort((a, b) => b.version - a.version);
}

export const bundlesQueryOptions = (tenant: string) => queryOptions({ queryKey: ['tenants', tenant, 'bundles'], queryFn: () => getBundles(tenant) });

export function useBundles(tenant: string) {
  return useQuery(bundlesQueryOptions(tenant));
}
