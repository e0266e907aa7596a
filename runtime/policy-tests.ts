// The console also runs this in the browser: no node: modules here.
import type { ConstraintRef, EvaluationResult, FilterReason, PolicyTest, PolicyTestFailure, PolicyTestOutcome } from '../policy-schemas/types.gen.ts';
import { escapePointer as token } from '../policy-schemas/pointer.ts';
import { createView, decide } from './decide.ts';
import { evaluate } from './evaluate.ts';
import type { LoadedBundle } from './load-bundle.ts';

/** One answer indexed by tool id, so a test with thousands of expectations stays linear. */
type Answer = { result: EvaluationResult; visible: Map<string, string>; hidden: Map<string, string>; loaded: LoadedBundle };

// evaluate() answers the same request with the same (frozen) result: index each result once.
const indexes = new WeakMap<EvaluationResult, Answer>();

function indexAnswer(result: EvaluationResult, loaded: LoadedBundle): Answer {
  let a = indexes.get(result);
  if (!a) {
    a = { result, loaded, visible: new Map(result.tools.map((t) => [t.id, t.decision])), hidden: new Map(result.filtered.map((t) => [t.id, t.reason])) };
    indexes.set(result, a);
  }
  return a;
}

/** What a tool looked like in one answer, in words a reader of a failure understands. */
function seenAs(a: Answer, id: string): string {
  if (a.result.rejected) return `the whole request rejected (${a.result.rejected.reason}: ${a.result.rejected.groups.join(', ')})`;
  const decision = a.visible.get(id);
  if (decision) return `${id} visible (${decision})`;
  const reason = a.hidden.get(id);
  if (reason) return `${id} hidden (${reason})`;
  return `${id} ${a.loaded.byId.has(id) ? 'absent from the answer' : 'not in the bundle'}`;
}

/**
 * Runs policy tests against a loaded bundle: each test's request goes through evaluate(), and every
 * expectation that does not hold becomes one failure whose pointer names it in the tests document
 * (`/tests/<i>/expect/visible/<j>`, `/tests/<i>/expect/hidden/<id>`, …) with what was seen instead.
 * `calls` go through decide() under the test's request: the decision, and the error code when the
 * test gives one, must be decide's answer.
 * The same function decides the publish gate, simulate's test outcomes and `toolgate test`.
 */
export function runPolicyTests(loaded: LoadedBundle, tests: readonly PolicyTest[]): PolicyTestOutcome[] {
  return tests.map((test, i) => {
    const failures: PolicyTestFailure[] = [];
    const base = `/tests/${i}/expect`;
    const fail = (pointer: string, expected: string, seen: string) =>
      failures.push({ pointer, expected, seen, message: `test "${test.name}": expected ${expected}, saw ${seen}` });
    const result = evaluate(loaded, test.request);
    const a = indexAnswer(result, loaded);
    const { visible, hidden, decisions, rejected, calls } = test.expect;

    if (rejected !== undefined && rejected !== !!result.rejected) {
      fail(
        `${base}/rejected`,
        rejected ? 'the request to be rejected' : 'the request not to be rejected',
        rejected ? `it accepted (${result.tools.length} tools visible)` : seenAs(a, ''),
      );
    }
    (visible ?? []).forEach((id, j) => {
      if (result.rejected || !a.visible.has(id)) fail(`${base}/visible/${j}`, `${id} visible`, seenAs(a, id));
    });
    for (const [id, reason] of Object.entries(hidden ?? {}) as [string, FilterReason | 'any'][]) {
      const held = reason === 'any' ? a.hidden.has(id) : a.hidden.get(id) === reason;
      if (result.rejected || !held) fail(`${base}/hidden/${token(id)}`, reason === 'any' ? `${id} hidden` : `${id} hidden (${reason})`, seenAs(a, id));
    }
    for (const [id, decision] of Object.entries(decisions ?? {})) {
      if (result.rejected || a.visible.get(id) !== decision) fail(`${base}/decisions/${token(id)}`, `${id} visible (${decision})`, seenAs(a, id));
    }
    if (calls?.length) {
      const view = createView(loaded, test.request);
      calls.forEach((call, j) => {
        const got = decide(view, { toolCallId: `test-${i}-${j}`, name: call.name, arguments: call.arguments, connectionId: call.connectionId });
        const codeDiffers = call.errorCode !== undefined && call.errorCode !== got.errorCode;
        if (got.decision !== call.decision || codeDiffers) {
          fail(`${base}/calls/${j}`, `a call of ${call.name} answered ${answerText(call)}`, answerText(got));
        }
      });
    }
    return { name: test.name, passed: failures.length === 0, failures };
  });
}

/** A decide answer in words: its decision, error code and the constraint that decided (never the arguments). */
function answerText(d: { decision: string; errorCode?: string; constraint?: ConstraintRef }): string {
  const code = d.errorCode ? ` (${d.errorCode})` : '';
  const by = d.constraint ? `, by constraint ${d.constraint.index} of role ${d.constraint.role}: ${d.constraint.reason}` : '';
  return `${d.decision}${code}${by}`;
}

/** Every failure of a run, in test order: what a publish refusal and `toolgate test` list. */
export function failuresOf(outcomes: readonly PolicyTestOutcome[]): PolicyTestFailure[] {
  return outcomes.flatMap((o) => o.failures);
}
