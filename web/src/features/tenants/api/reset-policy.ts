import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** Makes the draft policy and grants what a published version carried (after a rollback, so it sticks). */
export async function resetPolicy({
  tenant,
  version,
  policyVersion,
  reason,
}: {
  tenant: string;
  version: number;
  policyVersion?: number;
  reason?: string;
}): Promise<TenantPolicy> {
  return api<TenantPolicy>(`/v1/tenants/${encodeURIComponent(tenant)}/policy/reset`, { method: 'POST', body: { version }, ifMatch: policyVersion, reason });
}

export function useResetPolicy() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: resetPolicy,
    onSuccess: (policy, { tenant }) => {
      qc.setQueryData(['tenants', tenant, 'policy'], policy);
      return Promise.all([qc.invalidateQueries({ queryKey: ['tenants', tenant] }), qc.invalidateQueries({ queryKey: ['tenants', 'overview'] })]);
    },
  });
}
