import { Hono } from 'hono';
import type { EvaluationRequest } from '../../policy-schemas/types.gen.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import { compileDraft } from '../compiler/draft.ts';
import { readValid } from '../http/body.ts';

/**
 * `POST /v1/tenants/:tenant/simulate`: compiles the current draft and answers the request through
 * the runtime's own evaluate(), so the console shows what a runtime will do once it is published.
 */
export const simulateRoutes = new Hono<AppEnv>();

simulateRoutes.post('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'simulate', 'run', tenant);
  const request = await readValid<EvaluationRequest>(c, 'evaluation-request');
  const { loaded } = await compileDraft(c.get('deps').database.db, tenant);
  return c.json(evaluate(loaded, request));
});
