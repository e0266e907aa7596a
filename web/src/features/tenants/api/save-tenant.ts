import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Tenant } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export async function saveTenant({ tenant, create }: { tenant: Tenant; create: boolean }): Promise<Tenant> {
  if (create) return api<Tenant>('/v1/tenants', { method: 'POST', body: tenant });
  const { policy: _policy, ...rest } = tenant;
  return api<Tenant>(`/v1/tenants/${encodeURIComponent(tenant.id)}`, { method: 'PATCH', body: { name: rest.name }, ifMatch: tenant.version });
}

export function useSaveTenant() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: saveTenant, onSuccess: () => qc.invalidateQueries({ queryKey: ['tenants', 'list'] }) });
}
