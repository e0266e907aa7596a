import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { SsoAccess, SsoMapping } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type StoredMapping = SsoMapping & { version: number };

export async function getMappings(): Promise<StoredMapping[]> {
  return (await api<{ items: StoredMapping[] }>('/v1/sso/mappings')).items;
}

export const mappingsQueryOptions = () => queryOptions({ queryKey: ['sso-mappings'], queryFn: getMappings, retry: false });

export function useMappings() {
  return useQuery(mappingsQueryOptions());
}

export function useCreateMapping() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (m: SsoMapping) => api<StoredMapping>('/v1/sso/mappings', { method: 'POST', body: m }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['sso-mappings'] }),
  });
}

/** Replaces a mapping (If-Match with the version it was read at; a 412 shows the list as it is now). */
export function useUpdateMapping() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ mapping, version }: { mapping: SsoMapping; version: number }) =>
      api<StoredMapping>(`/v1/sso/mappings/${encodeURIComponent(mapping.id)}`, { method: 'PUT', body: mapping, ifMatch: version }),
    onSettled: () => qc.invalidateQueries({ queryKey: ['sso-mappings'] }),
  });
}

export function useDeleteMapping() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (m: StoredMapping) => api<void>(`/v1/sso/mappings/${encodeURIComponent(m.id)}`, { method: 'DELETE', ifMatch: m.version }),
    // A stale version (412) means someone else changed it: show the list as it is now.
    onSettled: () => qc.invalidateQueries({ queryKey: ['sso-mappings'] }),
  });
}

/** What a set of ID-token claims would get under the current mappings. */
export function usePreview() {
  return useMutation({ mutationFn: (claims: Record<string, unknown>) => api<SsoAccess>('/v1/sso/mappings/preview', { method: 'POST', body: { claims } }) });
}

/** Whether this server offers single sign-on (asked before anyone is signed in). */
export function useSsoEnabled() {
  return useQuery({
    queryKey: ['sso-enabled'],
    queryFn: async () => (await api<{ enabled: boolean }>('/v1/session/sso')).enabled,
    retry: false,
    staleTime: Infinity,
  });
}
