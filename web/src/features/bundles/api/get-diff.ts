import { queryOptions, useQuery } from '@tanstack/react-query';
import type { BundleDiff } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** What changed from version `a` to `b` (`b` may be `draft`). */
export async function getDiff(tenant: string, a: number, b: number | 'draft'): Promise<BundleDiff> {
  return api<BundleDiff>(`/v1/tenants/${encodeURIComponent(tenant)}/bundles/${a}/diff/${b}`);
}

// The draft's diff depends on the policy and the inventory: keyed by the policy version and refetched on mount.
export const diffQueryOptions = (tenant: string, a: number, b: number | 'draft', draftVersion?: number) =>
  queryOptions({
    queryKey: ['tenants', tenant, 'diff', a, b, draftVersion],
    queryFn: () => getDiff(tenant, a, b),
    retry: false,
    staleTime: b === 'draft' ? 0 : Infinity,
  });

export function useDiff(tenant: string, a: number | undefined, b: number | 'draft', draftVersion?: number) {
  return useQuery({ ...diffQueryOptions(tenant, a ?? 0, b, draftVersion), enabled: a !== undefined });
}
