import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type { EvaluationRequest, EvaluationResult, TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/**
 * What the subject would see under the tenant's current draft, or under `unsaved` (a policy being
 * edited, evaluated in place of the saved one; the server stores nothing).
 */
export async function simulate(tenant: string, request: EvaluationRequest, unsaved?: TenantPolicy): Promise<EvaluationResult> {
  const body = unsaved ? { ...request, policy: unsaved } : request;
  return api<EvaluationResult>(`/v1/tenants/${encodeURIComponent(tenant)}/simulate`, { method: 'POST', body });
}

export const simulateQueryOptions = (tenant: string, request: EvaluationRequest | null, policyVersion: number | undefined, unsaved?: TenantPolicy) =>
  queryOptions({
    queryKey: ['tenants', tenant, 'simulate', request, policyVersion, unsaved ?? null],
    queryFn: () => simulate(tenant, request!, unsaved),
    enabled: !!request?.subject,
    retry: false,
    // Keep the last answer on screen while an edit is being evaluated.
    placeholderData: keepPreviousData,
  });

export function useSimulation(tenant: string, request: EvaluationRequest | null, policyVersion: number | undefined, unsaved?: TenantPolicy) {
  return useQuery(simulateQueryOptions(tenant, request, policyVersion, unsaved));
}
