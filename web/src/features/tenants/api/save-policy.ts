import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** Replaces the tenant's draft policy; If-Match is the version the edit started from. */
export async function savePolicy({ tenant, policy, reason }: { tenant: string; policy: TenantPolicy; reason?: string }): Promise<TenantPolicy> {
  return api<TenantPolicy>(`/v1/tenants/${encodeURIComponent(tenant)}/policy`, { method: 'PUT', body: policy, ifMatch: policy.version, reason });
}

export function useSavePolicy() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: savePolicy,
    onSuccess: (policy, { tenant }) => {
      qc.setQueryData(['tenants', tenant, 'policy'], policy);
      void qc.invalidateQueries({ queryKey: ['tenants', tenant] });
      void qc.invalidateQueries({ queryKey: ['tenants', 'overview'] });
    },
  });
}
