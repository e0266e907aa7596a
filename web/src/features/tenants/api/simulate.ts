import { queryOptions, useQuery } from '@tanstack/react-query';
import type { EvaluationRequest, EvaluationResult } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** What the subject would see under the tenant's current draft. */
export async function simulate(tenant: string, request: EvaluationRequest): Promise<EvaluationResult> {
  return api<EvaluationResult>(`/v1/tenants/${encodeURIComponent(tenant)}/simulate`, { method: 'POST', body: request });
}

export const simulateQueryOptions = (tenant: string, request: EvaluationRequest | null, policyVersion: number | undefined) =>
  queryOptions({
    queryKey: ['tenants', tenant, 'simulate', request, policyVersion],
    queryFn: () => simulate(tenant, request!),
    enabled: !!request?.subject,
    retry: false,
  });

export function useSimulation(tenant: string, request: EvaluationRequest | null, policyVersion: number | undefined) {
  return useQuery(simulateQueryOptions(tenant, request, policyVersion));
}
