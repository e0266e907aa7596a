import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { EvaluationRequest, EvaluationResult } from '../../../../../policy-schemas/types.gen.ts';
import { Notice } from '../../../components/notice.tsx';
import { href } from '../../../lib/router.ts';
import { testsQueryOptions } from '../api/get-tests.ts';
import { useSaveTests } from '../api/save-tests.ts';
import { testFromSimulation } from '../test-from-simulation.ts';

/** One click: what the simulator shows now becomes a policy test of the tenant. */
export function SaveAsTestButton({ tenant, request, result }: { tenant: string; request: EvaluationRequest; result: EvaluationResult }) {
  const qc = useQueryClient();
  const save = useSaveTests();
  const [saved, setSaved] = useState<string | null>(null);
  const onClick = async () => {
    setSaved(null);
    // The latest tests, so the new one is appended to what is saved now (If-Match guards the rest).
    const current = await qc.fetchQuery({ ...testsQueryOptions(tenant), staleTime: 0 });
    const test = testFromSimulation(
      request,
      result,
      current.tests.map((t) => t.name),
    );
    save.mutate(
      { tenant, tests: [...current.tests, test], version: current.version, reason: `test from the simulator: ${test.name}` },
      { onSuccess: () => setSaved(test.name) },
    );
  };
  return (
    <div className="save-as-test">
      <button type="button" onClick={() => void onClick().catch(() => undefined)} disabled={save.isPending}>
        Save as test
      </button>
      {saved ? (
        <p role="status" className="notice notice-success">
          Saved as test “{saved}”. <a href={href(`/tenants/${tenant}/tests`)}>See the tests</a>
        </p>
      ) : null}
      {save.error ? <Notice error={save.error} /> : null}
    </div>
  );
}
