import { escapePointer } from '../../policy-schemas/index.ts';
import type { PolicyTest } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import type { DbOrTx } from '../db/database.ts';
import type { ProblemDetail } from '../errors.ts';

/**
 * Duplicate test names, and tool ids in expectations that name nothing in the inventory (a typo
 * would otherwise make a test that can never pass, or one that passes for the wrong reason).
 */
export async function checkPolicyTests(db: DbOrTx, tests: PolicyTest[]): Promise<ProblemDetail[]> {
  const problems: ProblemDetail[] = [];
  const known = new Set((await db.selectFrom('tools').select('id').execute()).map((r) => r.id));
  const seen = new Map<string, number>();
  tests.forEach((t, i) => {
    const first = seen.get(t.name);
    if (first !== undefined) problems.push({ pointer: `/tests/${i}/name`, message: `"${t.name}" is already the name of test ${first}`, code: 'validation' });
    else seen.set(t.name, i);
    for (const ref of toolReferences(t, i)) {
      if (!known.has(ref.id)) problems.push({ pointer: ref.pointer, message: `unknown tool "${ref.id}"`, code: 'unknown_reference' });
    }
  });
  return problems;
}

/**
 * Every tenant's tests that name `toolId` (a 409 for deleting it): once deleted, the tests could
 * no longer be saved as they are and would fail every publish for a tool that is simply gone.
 */
export async function testReferrersOf(db: DbOrTx, toolId: string): Promise<ProblemDetail[]> {
  const rows = await db.selectFrom('tenant_tests').select(['tenant', 'body']).orderBy('tenant').execute();
  const problems: ProblemDetail[] = [];
  for (const row of rows) {
    const { tests } = JSON.parse(row.body) as { tests: PolicyTest[] };
    tests.forEach((t, i) => {
      for (const ref of toolReferences(t, i)) {
        if (ref.id === toolId)
          problems.push({
            pointer: `/tenants/${escapePointer(row.tenant)}${ref.pointer}`,
            message: `test "${t.name}" of tenant ${row.tenant} names ${toolId}`,
            code: 'in_use',
          });
      }
    });
  }
  return problems;
}

/** The tool ids test `i` names in its expectations, each with its pointer. */
function toolReferences(t: PolicyTest, i: number): { id: string; pointer: string }[] {
  return [
    ...(t.expect.visible ?? []).map((id, j) => ({ id, pointer: `/tests/${i}/expect/visible/${j}` })),
    ...Object.keys(t.expect.hidden ?? {}).map((id) => ({ id, pointer: `/tests/${i}/expect/hidden/${escapePointer(id)}` })),
    ...Object.keys(t.expect.decisions ?? {}).map((id) => ({ id, pointer: `/tests/${i}/expect/decisions/${escapePointer(id)}` })),
    // A call expected to be `unavailable` names a tool that is not there on purpose.
    ...(t.expect.calls ?? []).flatMap((c, j) => (c.errorCode === 'unavailable' ? [] : [{ id: c.name, pointer: `/tests/${i}/expect/calls/${j}/name` }])),
  ];
}

/**
 * What `after` removes or weakens of `before`: tests are a net that editors may add to but not
 * cut, so each of these is an admin's change. A test is known by its name; it is cut when it is
 * gone (renaming is removing one test and adding another), when its request changed (it would test
 * something else), and when an expectation it had is gone or says something else: a `visible` id,
 * a `hidden` id or its reason, a `decisions` id or its decision, `rejected`, a `calls` entry.
 * Pointers name what was cut where it stands in `before`, the stored tests the client read.
 */
export function cutsOf(before: PolicyTest[], after: PolicyTest[]): ProblemDetail[] {
  const cuts: ProblemDetail[] = [];
  const cut = (pointer: string, message: string) =>
    cuts.push({ pointer, message: `${message}; removing a test or an expectation is an admin's change`, code: 'forbidden' });
  const now = new Map(after.map((t) => [t.name, t]));
  before.forEach((old, i) => {
    const at = `/tests/${i}`;
    const next = now.get(old.name);
    if (!next) return cut(at, `test "${old.name}" was removed`);
    if (canonicalJson(old.request) !== canonicalJson(next.request)) return cut(`${at}/request`, `the request of test "${old.name}" was changed`);
    const was = old.expect;
    const is = next.expect;
    const visible = new Set(is.visible ?? []);
    (was.visible ?? []).forEach((id, j) => {
      if (!visible.has(id)) cut(`${at}/expect/visible/${j}`, `test "${old.name}" no longer expects ${id} visible`);
    });
    for (const [id, reason] of Object.entries(was.hidden ?? {})) {
      if (!Object.hasOwn(is.hidden ?? {}, id) || is.hidden?.[id] !== reason)
        cut(`${at}/expect/hidden/${escapePointer(id)}`, `test "${old.name}" no longer expects ${id} hidden (${reason})`);
    }
    for (const [id, decision] of Object.entries(was.decisions ?? {})) {
      if (!Object.hasOwn(is.decisions ?? {}, id) || is.decisions?.[id] !== decision)
        cut(`${at}/expect/decisions/${escapePointer(id)}`, `test "${old.name}" no longer expects ${decision} for ${id}`);
    }
    if (was.rejected !== undefined && is.rejected !== was.rejected) {
      cut(`${at}/expect/rejected`, `test "${old.name}" no longer expects the request ${was.rejected ? '' : 'not '}to be rejected`);
    }
    // Calls have no key: each one kept must appear as it was (order free; a duplicate counts once each).
    const calls = (is.calls ?? []).map((c) => canonicalJson(c));
    (was.calls ?? []).forEach((call, j) => {
      const k = calls.indexOf(canonicalJson(call));
      if (k < 0) cut(`${at}/expect/calls/${j}`, `test "${old.name}" no longer expects the call of ${call.name} to be ${call.decision}`);
      else calls.splice(k, 1);
    });
  });
  return cuts;
}
