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

/** What an admin chose to assert of a simulation: each id at most once, in one of the lists. */
export type TestChoice = {
  visible: readonly string[];
  /** Filtered ids to keep hidden; `anyReason` (the default) holds them hidden whatever the reason. */
  hidden: readonly string[];
  anyReason: boolean;
  /** Visible ids whose decision (allow or require_approval) must stay as it is now. */
  decisions: readonly string[];
  rejected: boolean;
};

/**
 * A policy test asserting what the admin chose of the simulator's answer, and nothing else, so a
 * later change to a tool nobody asserted does not fail it. `hidden` keeps the current reason only
 * when asked to. Null when nothing was chosen.
 */
export function testFromChoice(request: EvaluationRequest, result: EvaluationResult, choice: TestChoice, name: string): PolicyTest | null {
  if (choice.rejected && result.rejected) return { name, request, expect: { rejected: true } };
  const reasons = new Map(result.filtered.map((f) => [f.id, f.reason]));
  const decisions = new Map(result.tools.map((x) => [x.id, x.decision]));
  const expect: PolicyTest['expect'] = {};
  const visible = choice.visible.filter((id) => decisions.has(id));
  if (visible.length) expect.visible = [...visible];
  const hidden = choice.hidden.filter((id) => reasons.has(id));
  if (hidden.length) expect.hidden = Object.fromEntries(hidden.map((id) => [id, choice.anyReason ? 'any' : reasons.get(id)!]));
  const decided = choice.decisions.filter((id) => decisions.has(id));
  if (decided.length) expect.decisions = Object.fromEntries(decided.map((id) => [id, decisions.get(id)!]));
  return Object.keys(expect).length ? { name, request, expect } : null;
}
