import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api-client.ts';

/** The answer of GET …/bundles/:a/diff/:b; shown tolerantly since its shape is the engine's. */
export type BundleDiff = Record<string, unknown>;

export async function getDiff(tenant: string, a: string | number, b: string | number): Promise<BundleDiff> {
  return api<BundleDiff>(`/v1/tenants/${encodeURIComponent(tenant)}/bundles/${a}/diff/${b}`);
}

export const diffQueryOptions = (tenant: string, a: string | number, b: string | number, draftVersion?: number) =>
  queryOptions({ queryKey: ['tenants', tenant, 'diff', String(a), String(b), draftVersion], queryFn: () => getDiff(tenant, a, b), retry: false });

export function useDiff(tenant: string, a: string | number | undefined, b: string | number, draftVersion?: number) {
  return useQuery({ ...diffQueryOptions(tenant, a ?? 0, b, draftVersion), enabled: a !== undefined });
}
