import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Tenant } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** Creates a tenant (its policy starts empty and is edited at /tenants/:id). */
export async function createTenant(tenant: Tenant): Promise<Tenant> {
  return api<Tenant>('/v1/tenants', { method: 'POST', body: tenant });
}

export function useCreateTenant() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: createTenant, onSuccess: () => qc.invalidateQueries({ queryKey: ['tenants'] }) });
}
