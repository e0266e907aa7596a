import { useId } from 'react';
import type { PolicyTestOutcome, TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { Badge } from '../../../components/badge.tsx';
import { Notice } from '../../../components/notice.tsx';
import { href } from '../../../lib/router.ts';
import { useTestOutcomes } from '../api/run-tests.ts';
import { useTests } from '../api/get-tests.ts';

/** Test outcomes as they were computed (stored with a publish request): a status line and the failures. */
export function TestOutcomesView({ outcomes, title, where }: { outcomes: PolicyTestOutcome[]; title: string; where: string }) {
  const ids = useId();
  const failed = outcomes.filter((o) => !o.passed).length;
  return (
    <section className="test-results" aria-labelledby={`${ids}-t`}>
      <h3 id={`${ids}-t`}>{title}</h3>
      {outcomes.length ? (
        <>
          <p role="status" aria-label="Policy test status">
            {failed ? <Badge tone="bad">{failed} failing</Badge> : <Badge tone="ok">all pass</Badge>} {outcomes.length - failed} of {outcomes.length} pass{' '}
            {where}
          </p>
          <FailureList outcomes={outcomes} />
        </>
      ) : (
        <p className="muted small">The tenant had no policy tests.</p>
      )}
    </section>
  );
}

/** The failures of failing tests, each with its pointer into the tests and what was seen instead. */
export function FailureList({ outcomes }: { outcomes: PolicyTestOutcome[] }) {
  const failing = outcomes.filter((o) => !o.passed);
  if (!failing.length) return null;
  return (
    <ul className="test-failures" aria-label="Failing tests">
      {failing.map((o) => (
        <li key={o.name}>
          <strong>{o.name}</strong>
          <ul>
            {o.failures.map((f) => (
              <li key={f.pointer}>
                <code>{f.pointer}</code> expected {f.expected}, saw <strong>{f.seen}</strong>
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}

/**
 * Every policy test's pass/fail on the draft, or on `unsavedPolicy` while it is being edited
 * (re-run on each edit): shown beside the policy editor and before the publish button.
 */
export function TestResults({
  tenant,
  unsavedPolicy,
  policyVersion,
  title = 'Policy tests',
}: {
  tenant: string;
  unsavedPolicy?: TenantPolicy;
  policyVersion?: number;
  title?: string;
}) {
  const ids = useId();
  const tests = useTests(tenant);
  const outcomes = useTestOutcomes(tenant, tests.data?.tests, { unsavedPolicy, testsVersion: tests.data?.version, policyVersion });
  const list = outcomes.data ?? [];
  const failed = list.filter((o) => !o.passed).length;
  return (
    <section className="test-results" aria-labelledby={`${ids}-t`}>
      <h3 id={`${ids}-t`}>{title}</h3>
      {tests.error ? <Notice error={tests.error} /> : null}
      {outcomes.error ? <Notice error={outcomes.error} /> : null}
      {tests.data && !tests.data.tests.length ? (
        <p className="muted small">
          No policy tests yet. <a href={href(`/tenants/${tenant}/tests`)}>Add one</a>, or save what the simulator shows as a test.
        </p>
      ) : null}
      {tests.data?.tests.length && outcomes.data ? (
        <>
          <p role="status" aria-label="Policy test status">
            {failed ? <Badge tone="bad">{failed} failing</Badge> : <Badge tone="ok">all pass</Badge>} {list.length - failed} of {list.length} pass
            {unsavedPolicy ? ' with your unsaved edits' : ' on the draft'}
            {outcomes.isFetching ? <span className="muted"> · checking…</span> : null}
          </p>
          <FailureList outcomes={list} />
        </>
      ) : null}
    </section>
  );
}
