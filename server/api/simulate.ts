import { Hono } from 'hono';
import type { EvaluationRequest, SampleCall, SampleCallOutcome, SimulateRequest, SimulateResult } from '../../policy-schemas/types.gen.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import { runPolicyTests } from '../../runtime/policy-tests.ts';
import { authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import { dropReadOnly, readValid } from '../http/body.ts';
import { getPolicyTests } from '../store/policy-tests.ts';

/**
 * `POST /v1/tenants/:tenant/simulate`: compiles the current draft (with an unsaved policy in place
 * of the saved one when the body carries `policy`) and answers the request through the runtime's
 * own evaluate(), so the console shows what a runtime will do once it is published. `tests` holds
 * every policy test's outcome on the same draft (the saved tests, or unsaved ones sent as `tests`);
 * `calls` answers each sample call of the body through the runtime's decide(), with the argument
 * constraint that decided. Without tests or calls the answer is exactly evaluate()'s.
 */
export const simulateRoutes = new Hono<AppEnv>();

simulateRoutes.post('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'simulate', 'run', tenant);
  // `policy` (optional) is an unsaved edit to try out: it replaces the saved policy for this answer only.
  const {
    policy,
    tests: unsavedTests,
    calls,
    ...request
  } = await readValid<SimulateRequest>(c, 'simulate-request', (body) => {
    if (body.policy && typeof body.policy === 'object' && !Array.isArray(body.policy)) dropReadOnly(body.policy as Record<string, unknown>, ['tenant']);
  });
  const { database, compiler } = c.get('deps');
  const db = database.db;
  const loaded = await (await compiler.compileDraft(db, tenant, policy)).loaded();
  const tests = unsavedTests ?? (await getPolicyTests(db, tenant))?.tests ?? [];
  // evaluate() answers frozen (cached) objects: copy before adding the tests.
  const answer: SimulateResult = { ...evaluate(loaded, request as EvaluationRequest) };
  if (tests.length) answer.tests = runPolicyTests(loaded, tests);
  if (calls?.length) answer.calls = tryCalls(loaded, request as EvaluationRequest, calls);
  return c.json(answer);
});

/** Each sample call decided under the request as a runtime would, with the constraint that decided; never echoing arguments. */
function tryCalls(loaded: LoadedBundle, request: EvaluationRequest, calls: readonly SampleCall[]): SampleCallOutcome[] {
  const view = createView(loaded, request);
  return calls.map((call) => {
    const d = decide(view, { name: call.name, arguments: call.arguments, connectionId: call.connectionId });
    const out: SampleCallOutcome = { name: call.name, decision: d.decision };
    if (d.errorCode !== undefined) out.errorCode = d.errorCode;
    if (d.message !== undefined) out.message = d.message;
    if (d.errors !== undefined) out.errors = d.errors;
    if (d.constraint !== undefined) out.constraint = d.constraint;
    return out;
  });
}
