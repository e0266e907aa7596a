import type { PolicyTestFailure } from '../../policy-schemas/types.gen.ts';
import { failuresOf } from '../../runtime/policy-tests.ts';
import type { DbOrTx } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { getPolicyTests } from '../store/policy-tests.ts';
import type { Compiler } from './compiler.ts';
import { bundleRow } from '../store/bundles.ts';

/** What a publish may go ahead with: the revision its tests ran on, and the failures an admin forced past. */
export type GateOutcome = { testedRevision?: string; forced?: { failures: PolicyTestFailure[] } };

/**
 * The policy-test gate before a publish or rollback: runs the tenant's tests on exactly the content
 * that would be published (the draft, or the version rolled back to). Any failure refuses it with
 * 422 `tests_failed`, one error per failed expectation, unless `force` is set by an admin (then the
 * failures travel on into the publish's audit event). An editor's `force` is a 403.
 *
 * The draft is compiled by the server's compiler and kept there: the publish that follows takes
 * the same compiled bundle (by its snapshot's hash), so a publish compiles its draft once. For a
 * large catalog the tests run in the compiler's worker.
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
  if (target.rollbackTo !== undefined) {
    const row = await bundleRow(db, tenant, target.rollbackTo);
    // The publish itself answers the 404 for a version that does not exist.
    if (!row) return {};
    outcomes = await compiler.testOutcomes({ revision: row.revision, text: row.content }, tests);
    revision = row.revision;
    what = `version ${target.rollbackTo}`;
  } else {
    const draft = await compiler.compileDraft(db, tenant);
    outcomes = await compiler.testOutcomes(draft, tests);
    revision = draft.revision;
    what = 'the draft';
  }
  const failures = failuresOf(outcomes);
  if (failures.length === 0) return { testedRevision: revision };
  if (force.requested) return { testedRevision: revision, forced: { failures } };
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
