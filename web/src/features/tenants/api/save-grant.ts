import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ConnectionGrant } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

const base = (tenant: string) => `/v1/tenants/${encodeURIComponent(tenant)}/grants`;

export async function saveGrant({ tenant, grant, create }: { tenant: string; grant: ConnectionGrant; create: boolean }): Promise<ConnectionGrant> {
  if (create) return api<ConnectionGrant>(base(tenant), { method: 'POST', body: grant });
  return api<ConnectionGrant>(`${base(tenant)}/${encodeURIComponent(grant.connectionId)}`, { method: 'PUT', body: grant, ifMatch: grant.version });
}

export async function deleteGrant({ tenant, grant }: { tenant: string; grant: ConnectionGrant }): Promise<void> {
  await api<void>(`${base(tenant)}/${encodeURIComponent(grant.connectionId)}`, { method: 'DELETE', ifMatch: grant.version });
}

export function useSaveGrant() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: saveGrant, onSuccess: (_g, { tenant }) => qc.invalidateQueries({ queryKey: ['tenants', tenant, 'grants'] }) });
}

export function useDeleteGrant() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: deleteGrant, onSuccess: (_g, { tenant }) => qc.invalidateQueries({ queryKey: ['tenants', tenant, 'grants'] }) });
}
