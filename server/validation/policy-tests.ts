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
    const unknown = (pointer: string, id: string) => {
      if (!known.has(id)) problems.push({ pointer, message: `unknown tool "${id}"`, code: 'unknown_reference' });
    };
    (t.expect.visible ?? []).forEach((id, j) => unknown(`/tests/${i}/expect/visible/${j}`, id));
    for (const id of Object.keys(t.expect.hidden ?? {})) unknown(`/tests/${i}/expect/hidden/${escapePointer(id)}`, id);
    for (const id of Object.keys(t.expect.decisions ?? {})) unknown(`/tests/${i}/expect/decisions/${escapePointer(id)}`, id);
  });
  return problems;
}
