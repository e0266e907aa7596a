import { queryOptions, useQuery } from '@tanstack/react-query';
import type { BundleVersion } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** Published versions, newest first, with who/when/why and a summary. */
export async function getBundles(tenant: string): Promise<BundleVersion[]> {
  const res = await api<{ items: BundleVersion[] }>(`/v1/tenants/${encodeURIComponent(tenant)}/bundles`);
  return [...res.items].sort((a, b) => b.version - a.version);
}

export const bundlesQueryOptions = (tenant: string) => queryOptions({ queryKey: ['tenants', tenant, 'bundles'], queryFn: () => getBundles(tenant) });

export function useBundles(tenant: string) {
  return useQuery(bundlesQueryOptions(tenant));
}
