import { useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import type { EvaluationRequest, EvaluationResult } from '../../../../../policy-schemas/types.gen.ts';
import { Notice } from '../../../components/notice.tsx';
import { href } from '../../../lib/router.ts';
import { testsQueryOptions, useTests } from '../api/get-tests.ts';
import { useSaveTests } from '../api/save-tests.ts';
import { testFromChoice, testName } from '../test-from-simulation.ts';

/**
 * "Save as test": the admin picks what the test asserts of the simulator's answer (which tools
 * must stay visible, which hidden, which decisions must hold), so the test fails only when one of
 * those changes, never on an unrelated later edit.
 */
export function SaveAsTestButton({ tenant, request, result }: { tenant: string; request: EvaluationRequest; result: EvaluationResult }) {
  const [open, setOpen] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <div className="save-as-test">
      {open ? (
        <ChooseAssertions
          tenant={tenant}
          request={request}
          result={result}
          onDone={(name) => {
            setOpen(false);
            setSaved(name);
          }}
          onCancel={() => setOpen(false)}
        />
      ) : (
        <button
          type="button"
          onClick={() => {
            setSaved(null);
            setOpen(true);
          }}
        >
          Save as test
        </button>
      )}
      {saved ? (
        <p role="status" className="notice notice-success">
          Saved as test “{saved}”. <a href={href(`/tenants/${tenant}/tests`)}>See the tests</a>
        </p>
      ) : null}
    </div>
  );
}

function toggle(list: string[], id: string, on: boolean): string[] {
  return on ? [...list.filter((x) => x !== id), id] : list.filter((x) => x !== id);
}

function ChooseAssertions({
  tenant,
  request,
  result,
  onDone,
  onCancel,
}: {
  tenant: string;
  request: EvaluationRequest;
  result: EvaluationResult;
  onDone: (name: string) => void;
  onCancel: () => void;
}) {
  const ids = useId();
  const qc = useQueryClient();
  const tests = useTests(tenant);
  const save = useSaveTests();
  const [name, setName] = useState(() => testName(request, tests.data?.tests.map((t) => t.name) ?? []));
  const [visible, setVisible] = useState<string[]>([]);
  const [hidden, setHidden] = useState<string[]>([]);
  const [decisions, setDecisions] = useState<string[]>([]);
  const [anyReason, setAnyReason] = useState(true);
  const [rejected, setRejected] = useState(!!result.rejected);
  const test = testFromChoice(request, result, { visible, hidden, decisions, anyReason, rejected }, name.trim());
  const taken = tests.data?.tests.some((t) => t.name === name.trim()) ?? false;

  const submit = async () => {
    if (!test || taken) return;
    // The latest tests, so the new one is appended to what is saved now (If-Match guards the rest).
    const current = await qc.fetchQuery({ ...testsQueryOptions(tenant), staleTime: 0 });
    save.mutate(
      { tenant, tests: [...current.tests, test], version: current.version, reason: `test from the simulator: ${test.name}` },
      { onSuccess: () => onDone(test.name) },
    );
  };

  return (
    <form
      className="card choose-assertions"
      aria-label="New test from the simulator"
      onSubmit={(e) => {
        e.preventDefault();
        void submit().catch(() => undefined);
      }}
    >
      <h3>What must this test hold?</h3>
      <p className="muted small">Tick what matters; everything else may change without failing the test.</p>
      <div className="field">
        <label htmlFor={`${ids}-name`}>Test name</label>
        <input
          id={`${ids}-name`}
          required
          value={name}
          aria-invalid={taken || undefined}
          aria-describedby={taken ? `${ids}-name-taken` : undefined}
          onChange={(e) => setName(e.target.value)}
        />
        {taken ? (
          <p id={`${ids}-name-taken`} className="field-error">
            A test of this tenant already has this name.
          </p>
        ) : null}
      </div>
      {result.rejected ? (
        <label className="check">
          <input type="checkbox" checked={rejected} onChange={(e) => setRejected(e.target.checked)} /> The request must stay rejected ({result.rejected.reason})
        </label>
      ) : (
        <div className="assertion-lists">
          <fieldset>
            <legend>
              Must stay visible ({visible.length} of {result.tools.length})
            </legend>
            <div className="button-row">
              <button type="button" className="link-button" onClick={() => setVisible(result.tools.map((t) => t.id))}>
                All visible tools
              </button>
              <button type="button" className="link-button" onClick={() => setVisible([])}>
                None
              </button>
            </div>
            <ul className="plain check-list">
              {result.tools.map((t) => (
                <li key={t.id}>
                  <label className="check">
                    <input type="checkbox" checked={visible.includes(t.id)} onChange={(e) => setVisible(toggle(visible, t.id, e.target.checked))} />{' '}
                    <span className="mono">{t.id}</span>
                  </label>
                  {visible.includes(t.id) ? (
                    <label className="check small">
                      <input type="checkbox" checked={decisions.includes(t.id)} onChange={(e) => setDecisions(toggle(decisions, t.id, e.target.checked))} /> and
                      stays “{t.decision}”<span className="sr-only"> ({t.id})</span>
                    </label>
                  ) : null}
                </li>
              ))}
            </ul>
          </fieldset>
          <fieldset>
            <legend>
              Must stay hidden ({hidden.length} of {result.filtered.length})
            </legend>
            <ul className="plain check-list">
              {result.filtered.map((f) => (
                <li key={f.id}>
                  <label className="check">
                    <input type="checkbox" checked={hidden.includes(f.id)} onChange={(e) => setHidden(toggle(hidden, f.id, e.target.checked))} />{' '}
                    <span className="mono">{f.id}</span> <span className="muted">({f.reason} now)</span>
                  </label>
                </li>
              ))}
            </ul>
            <label className="check">
              <input type="checkbox" checked={!anyReason} onChange={(e) => setAnyReason(!e.target.checked)} /> Hidden tools must keep the reason they have now
              (otherwise any reason will do)
            </label>
          </fieldset>
        </div>
      )}
      <div className="button-row">
        <button type="submit" className="primary" disabled={!test || taken || save.isPending}>
          Save test
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        {!test ? <span className="muted small">Tick at least one thing the test must hold.</span> : null}
      </div>
      {save.error ? <Notice error={save.error} /> : null}
    </form>
  );
}
