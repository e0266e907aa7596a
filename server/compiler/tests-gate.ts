import type { PolicyTestFailure } from '../../policy-schemas/types.gen.ts';
import { failuresOf } from '../../runtime/policy-tests.ts';
import type { DbOrTx } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { getPolicyTests } from '../store/policy-tests.ts';
import type { Compiler } from './compiler.ts';
import { type DraftRead, readDraft } from './publish.ts';
import { bundleRow } from '../store/bundles.ts';

/**
 * What a publish may go ahead with: the revision its tests ran on, and the failures an admin forced
 * past; `draft` is the draft as the tests read and compiled it, which the publish takes as it is.
 */
export type GateOutcome = { testedRevision?: string; forced?: { failures: PolicyTestFailure[] }; draft?: DraftRead };

/**
 * The policy-test gate before a publish or rollback: runs the tenant's tests on exactly the content
 * that would be published (the draft, or the version rolled back to). Any failure refuses it with
 * 422 `tests_failed`, one error per failed expectation, unless `force` is set by an admin (then the
 * failures travel on into the publish's audit event). An editor's `force` is a 403.
 *
 * The draft is read and compiled once: the publish that follows takes it from the outcome (`draft`),
 * so a publish reads and compiles its draft once. For a large catalog the compile and the tests run
 * in the compiler's worker.
 */
export async function checkPublishTests(
  compiler: Compiler,
  db: DbOrTx,
  tenant: string,
  target: { rollbackTo?: number },
  force: { requested: boolean; allowed: boolean },
): Promise<GateOutcome> {
  if (force.requested && !force.allowed) {
    throw new ApiError(403, 'forbidden', 'Only an admin may publish past failing policy tests', {
      errors: [{ pointer: '/force', message: 'needs the admin role' }],
    });
  }
  const tests = (await getPolicyTests(db, tenant))?.tests ?? [];
  if (tests.length === 0) return {};
  let outcomes: Awaited<ReturnType<Compiler['testOutcomes']>>;
  let revision: string;
  let what: string;
  let draft: DraftRead | undefined;
  if (target.rollbackTo !== undefined) {
    const row = await bundleRow(db, tenant, target.rollbackTo);
    // The publish itself answers the 404 for a version that does not exist.
    if (!row) return {};
    outcomes = await compiler.testOutcomes({ revision: row.revision, text: row.content }, tests);
    revision = row.revision;
    what = `version ${target.rollbackTo}`;
  } else {
    draft = await readDraft(compiler, db, tenant);
    outcomes = await compiler.testOutcomes(draft.compiled, tests);
    revision = draft.compiled.revision;
    what = 'the draft';
  }
  const failures = failuresOf(outcomes);
  if (failures.length === 0) return { testedRevision: revision, draft };
  if (force.requested) return { testedRevision: revision, forced: { failures }, draft };
  const failed = outcomes.filter((o) => !o.passed).length;
  const more = failures.length > 1 ? ` (and ${failures.length - 1} more)` : '';
  throw new ApiError(
    422,
    'tests_failed',
    `${failed} of ${tests.length} policy tests fail on ${what} of ${tenant}: ${failures[0].message}${more}. An admin may publish anyway with "force": true and a reason.`,
    {
      errors: failures.map((f) => ({ pointer: f.pointer, message: f.message, code: 'test_failed' })),
    },
  );
}
