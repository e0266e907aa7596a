import { escapePointer } from '../../policy-schemas/index.ts';
import type { PolicyTest } from '../../policy-schemas/types.gen.ts';
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
