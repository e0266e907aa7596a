import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Bundle, EvaluationRequest, EvaluationResult } from '../../../../../policy-schemas/types.gen.ts';
import { ApiError, apiRaw } from '../../../lib/api-client.ts';

export type PublishedEvaluator = { version: number; evaluate: (request: EvaluationRequest) => EvaluationResult };

/**
 * The tenant's latest published bundle, loaded by the runtime SDK itself (the same evaluate() a
 * runtime runs), so the simulator can show what the draft changes against what is live.
 * Null when nothing is published yet.
 */
export async function getPublishedEvaluator(tenant: string): Promise<PublishedEvaluator | null> {
  let res: Response;
  try {
    res = await apiRaw(`/v1/tenants/${encodeURIComponent(tenant)}/bundles/latest`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
  const bundle = (await res.json()) as Bundle;
  // Loaded on demand: the SDK brings its own JSON Schema validator.
  const [{ loadBundle }, { evaluate }] = await Promise.all([import('../../../../../runtime/load-bundle.ts'), import('../../../../../runtime/evaluate.ts')]);
  // Evaluation only: compiling input schemas needs generated code, which the console's CSP forbids.
  const loaded = loadBundle(bundle, { inputValidators: false });
  return { version: bundle.version, evaluate: (request) => evaluate(loaded, request) };
}

export const publishedEvaluatorQueryOptions = (tenant: string) =>
  queryOptions({ queryKey: ['tenants', tenant, 'published-evaluator'], queryFn: () => getPublishedEvaluator(tenant), staleTime: 60_000, retry: false });

export function usePublishedEvaluator(tenant: string) {
  return useQuery(publishedEvaluatorQueryOptions(tenant));
}
