import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { PolicyTest, PolicyTests } from '../../../../../policy-schemas/types.gen.ts';
import { ApiError, api } from '../../../lib/api-client.ts';

/** Replaces the tenant's tests; If-Match is the version the edit started from. */
export async function saveTests({
  tenant,
  tests,
  version,
  reason,
}: {
  tenant: string;
  tests: PolicyTest[];
  version: number | undefined;
  reason?: string;
}): Promise<PolicyTests> {
  return api<PolicyTests>(`/v1/tenants/${encodeURIComponent(tenant)}/tests`, { method: 'PUT', body: { tests }, ifMatch: version, reason });
}

export function useSaveTests() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: saveTests,
    onSuccess: (saved, { tenant }) => {
      qc.setQueryData(['tenants', tenant, 'tests'], saved);
      void qc.invalidateQueries({ queryKey: ['tenants', tenant, 'test-outcomes'] });
    },
    // Someone saved the tests meanwhile: reload them, so that saving again applies this edit to theirs.
    onError: (err, { tenant }) => {
      if (err instanceof ApiError && err.status === 412) void qc.invalidateQueries({ queryKey: ['tenants', tenant, 'tests'] });
    },
  });
}
