import type { EvaluationRequest, EvaluationResult, PolicyTest } from '../../../../policy-schemas/types.gen.ts';

/** A name that says what the request is, unique among `taken`. */
export function testName(request: EvaluationRequest, taken: readonly string[]): string {
  let name = request.subject;
  if (request.groups?.length) name += ` in ${request.groups.join('+')}`;
  if (request.state) name += ` at ${request.state}`;
  if (request.profile) name += ` on ${request.profile}`;
  let unique = name;
  for (let i = 2; taken.includes(unique); i++) unique = `${name} (${i})`;
  return unique;
}

/**
 * "What the simulator shows now" as a test: the visible tools, the filtered ones with their
 * reasons, and the decisions that are not a plain allow (or, for a rejected request, that it is
 * rejected). Any later change to one of these answers fails the test.
 */
export function testFromSimulation(request: EvaluationRequest, result: EvaluationResult, taken: readonly string[]): PolicyTest {
  const name = testName(request, taken);
  if (result.rejected) return { name, request, expect: { rejected: true } };
  const expect: PolicyTest['expect'] = { visible: result.tools.map((t) => t.id), hidden: Object.fromEntries(result.filtered.map((f) => [f.id, f.reason])) };
  const approvals = result.tools.filter((t) => t.decision !== 'allow');
  if (approvals.length) expect.decisions = Object.fromEntries(approvals.map((t) => [t.id, t.decision]));
  return { name, request, expect };
}
