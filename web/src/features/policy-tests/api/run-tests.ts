import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { PolicyTest, PolicyTestOutcome, SimulateResult, TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/**
 * Every test's outcome through simulate: on the saved draft, or on `unsavedPolicy` while it is
 * edited; `unsavedTests` (a test being written) run in place of the saved ones. Nothing is stored.
 */
export async function runTests(tenant: string, tests: PolicyTest[], unsavedTests: boolean, unsavedPolicy?: TenantPolicy): Promise<PolicyTestOutcome[]> {
  if (!tests.length) return [];
  // Any request will do: simulate runs the tests beside it. The first test's is one the tenant knows.
  const body = { ...tests[0]!.request, ...(unsavedTests ? { tests } : {}), ...(unsavedPolicy ? { policy: unsavedPolicy } : {}) };
  const r = await api<SimulateResult>(`/v1/tenants/${encodeURIComponent(tenant)}/simulate`, { method: 'POST', body });
  return r.tests ?? [];
}

export function useTestOutcomes(
  tenant: string,
  tests: PolicyTest[] | undefined,
  opts: { unsavedTests?: boolean; unsavedPolicy?: TenantPolicy; testsVersion?: number; policyVersion?: number } = {},
) {
  return useQuery({
    queryKey: ['tenants', tenant, 'test-outcomes', opts.testsVersion, opts.policyVersion, opts.unsavedTests ? tests : null, opts.unsavedPolicy ?? null],
    queryFn: () => runTests(tenant, tests ?? [], !!opts.unsavedTests, opts.unsavedPolicy),
    enabled: tests !== undefined,
    retry: false,
    placeholderData: keepPreviousData,
  });
}
