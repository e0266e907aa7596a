// The console also runs this in the browser: no node: modules here.
import type { EvaluationResult, FilterReason, PolicyTest, PolicyTestFailure, PolicyTestOutcome } from '../policy-schemas/types.gen.ts';
import { evaluate } from './evaluate.ts';
import type { LoadedBundle } from './load-bundle.ts';

/** One JSON-pointer token (RFC 6901). */
const token = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** What a tool looked like in one answer, in words a reader of a failure understands. */
function seenAs(result: EvaluationResult, id: string, loaded: LoadedBundle): string {
  if (result.rejected) return `the whole request rejected (${result.rejected.reason}: ${result.rejected.groups.join(', ')})`;
  const visible = result.tools.find((t) => t.id === id);
  if (visible) return `${id} visible (${visible.decision})`;
  const hidden = result.filtered.find((t) => t.id === id);
  if (hidden) return `${id} hidden (${hidden.reason})`;
  return `${id} ${loaded.byId.has(id) ? 'absent from the answer' : 'not in the bundle'}`;
}

/**
 * Runs policy tests against a loaded bundle: each test's request goes through evaluate(), and every
 * expectation that does not hold becomes one failure whose pointer names it in the tests document
 * (`/tests/<i>/expect/visible/<j>`, `/tests/<i>/expect/hidden/<id>`, …) with what was seen instead.
 * The same function decides the publish gate, simulate's test outcomes and `toolgate test`.
 */
export function runPolicyTests(loaded: LoadedBundle, tests: readonly PolicyTest[]): PolicyTestOutcome[] {
  return tests.map((test, i) => {
    const failures: PolicyTestFailure[] = [];
    const base = `/tests/${i}/expect`;
    const fail = (pointer: string, expected: string, seen: string) =>
      failures.push({ pointer, expected, seen, message: `test "${test.name}": expected ${expected}, saw ${seen}` });
    const result = evaluate(loaded, test.request);
    const { visible, hidden, decisions, rejected } = test.expect;

    if (rejected !== undefined && rejected !== !!result.rejected) {
      fail(`${base}/rejected`, rejected ? 'the request to be rejected' : 'the request not to be rejected', rejected ? `it accepted (${result.tools.length} tools visible)` : seenAs(result, '', loaded));
    }
    (visible ?? []).forEach((id, j) => {
      if (result.rejected || !result.tools.some((t) => t.id === id)) fail(`${base}/visible/${j}`, `${id} visible`, seenAs(result, id, loaded));
    });
    for (const [id, reason] of Object.entries(hidden ?? {}) as [string, FilterReason][]) {
      const hit = result.filtered.find((t) => t.id === id);
      if (result.rejected || !hit || hit.reason !== reason) fail(`${base}/hidden/${token(id)}`, `${id} hidden (${reason})`, seenAs(result, id, loaded));
    }
    for (const [id, decision] of Object.entries(decisions ?? {})) {
      const hit = result.tools.find((t) => t.id === id);
      if (result.rejected || !hit || hit.decision !== decision) fail(`${base}/decisions/${token(id)}`, `${id} visible (${decision})`, seenAs(result, id, loaded));
    }
    return { name: test.name, passed: failures.length === 0, failures };
  });
}

/** Every failure of a run, in test order: what a publish refusal and `toolgate test` list. */
export function failuresOf(outcomes: readonly PolicyTestOutcome[]): PolicyTestFailure[] {
  return outcomes.flatMap((o) => o.failures);
}
