import { useMutation } from '@tanstack/react-query';
import type { EvaluationRequest, SampleCall, SampleCallOutcome, SimulateResult, TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/**
 * Decides one sample call under the request, on the draft (or on `unsaved`, a policy being
 * edited): the decision, error code and the argument constraint that decided. Stores nothing.
 */
export async function tryCall(tenant: string, request: EvaluationRequest, call: SampleCall, unsaved?: TenantPolicy): Promise<SampleCallOutcome> {
  const body = { ...request, calls: [call], tests: [], ...(unsaved ? { policy: unsaved } : {}) };
  const answer = await api<SimulateResult>(`/v1/tenants/${encodeURIComponent(tenant)}/simulate`, { method: 'POST', body });
  const outcome = answer.calls?.[0];
  if (!outcome) throw new Error('the server answered no call');
  return outcome;
}

export function useTryCall(tenant: string) {
  return useMutation({
    mutationFn: ({ request, call, unsaved }: { request: EvaluationRequest; call: SampleCall; unsaved?: TenantPolicy }) =>
      tryCall(tenant, request, call, unsaved),
  });
}
