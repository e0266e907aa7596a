import { useId, useMemo, useState } from 'react';
import type { PolicyTest, PolicyTestOutcome } from '../../../../../policy-schemas/types.gen.ts';
import { Badge } from '../../../components/badge.tsx';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { JsonEditor } from '../../../components/json-editor.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading } from '../../../components/page.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { canEditTenant } from '../../../lib/permissions.ts';
import { href, useUnsavedChangesPrompt } from '../../../lib/router.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { useTests } from '../api/get-tests.ts';
import { useTestOutcomes } from '../api/run-tests.ts';
import { useSaveTests } from '../api/save-tests.ts';
import { FailureList } from './test-results.tsx';

const pretty = (v: unknown) => JSON.stringify(v, null, 2);
const EXAMPLE: PolicyTest = { name: '', request: { subject: 'agent:' }, expect: { visible: [] } };

function requestSummary(t: PolicyTest): string {
  const r = t.request;
  return [r.subject, r.groups?.length ? `groups ${r.groups.join(', ')}` : null, r.state ? `state ${r.state}` : null, r.profile ? `profile ${r.profile}` : null]
    .filter(Boolean)
    .join(' · ');
}

function expectSummary(t: PolicyTest): string {
  const e = t.expect;
  const parts: string[] = [];
  if (e.visible?.length) parts.push(`${e.visible.length} visible`);
  if (e.hidden && Object.keys(e.hidden).length) parts.push(`${Object.keys(e.hidden).length} hidden`);
  if (e.decisions && Object.keys(e.decisions).length) parts.push(`${Object.keys(e.decisions).length} decisions`);
  if (e.rejected !== undefined) parts.push(e.rejected ? 'rejected' : 'not rejected');
  return parts.join(', ') || '—';
}

/** The tenant's policy tests: each one's pass/fail on the draft, and add, edit, delete. */
export function TestsPage({ tenant, session }: { tenant: string; session: Session }) {
  const tests = useTests(tenant);
  const outcomes = useTestOutcomes(tenant, tests.data?.tests, { testsVersion: tests.data?.version });
  const save = useSaveTests();
  const editable = canEditTenant(session, tenant);
  // null: no editor open; -1: a new test; otherwise the index of the test being edited.
  const [editing, setEditing] = useState<number | null>(null);
  const [success, setSuccess] = useState<string | null>(null);
  const ids = useId();
  if (tests.isPending) return <Loading what="policy tests" />;
  if (tests.error) return <Notice error={tests.error} />;
  const list = tests.data.tests;
  const outcomeOf = (name: string): PolicyTestOutcome | undefined => outcomes.data?.find((o) => o.name === name);

  const saveList = (next: PolicyTest[], message: string, onDone?: () => void) => {
    setSuccess(null);
    save.mutate({ tenant, tests: next, version: tests.data.version, reason: message }, { onSuccess: () => (setSuccess(message), onDone?.()) });
  };

  return (
    <div className="tests-page">
      <section aria-labelledby={`${ids}-list`}>
        <div className="card-header">
          <h2 id={`${ids}-list`}>Policy tests</h2>
          {editable && editing === null ? (
            <button type="button" className="primary" onClick={() => (setEditing(-1), setSuccess(null), save.reset())}>
              Add test
            </button>
          ) : null}
        </div>
        <p className="muted">
          Each test is a request and what its answer must show. They run on every simulation and before every publish or rollback: a failing test blocks it (an
          admin may publish anyway, with a reason). The simulator on the <a href={href(`/tenants/${tenant}`)}>policy page</a> saves what it shows as a test in
          one click.
        </p>
        {list.length === 0 ? (
          <p className="muted">No tests yet.</p>
        ) : (
          <div className="table-wrap">
            <DataTable label="Policy tests" columns={['Test', 'Request', 'Expects', 'On the draft']} actions={editable}>
              {list.map((t, i) => {
                const o = outcomeOf(t.name);
                return (
                  <tr key={t.name}>
                    <td>{t.name}</td>
                    <td className="small mono">{requestSummary(t)}</td>
                    <td className="small">{expectSummary(t)}</td>
                    <td>{o ? o.passed ? <Badge tone="ok">pass</Badge> : <Badge tone="bad">fail</Badge> : <span className="muted">…</span>}</td>
                    {editable ? (
                      <td>
                        <div className="button-row">
                          <button
                            type="button"
                            aria-label={`Edit ${t.name}`}
                            onClick={() => (setEditing(i), setSuccess(null), save.reset())}
                            disabled={editing !== null}
                          >
                            Edit
                          </button>
                          <ConfirmButton
                            question={`Delete the test “${t.name}”?`}
                            label={`Delete ${t.name}`}
                            disabled={save.isPending || editing !== null}
                            onConfirm={() =>
                              saveList(
                                list.filter((_, j) => j !== i),
                                `deleted test ${t.name}`,
                              )
                            }
                          >
                            Delete
                          </ConfirmButton>
                        </div>
                      </td>
                    ) : null}
                  </tr>
                );
              })}
            </DataTable>
          </div>
        )}
        {outcomes.error ? <Notice error={outcomes.error} /> : null}
        {outcomes.data ? <FailureList outcomes={outcomes.data} /> : null}
        {editing === null ? <Notice error={save.error} success={success} /> : null}
      </section>
      {editing !== null ? (
        <TestEditor
          key={editing}
          tenant={tenant}
          initial={editing >= 0 ? list[editing]! : EXAMPLE}
          index={editing >= 0 ? editing : list.length}
          error={save.error}
          pending={save.isPending}
          onCancel={() => (setEditing(null), save.reset())}
          onSave={(test) => {
            const next = editing >= 0 ? list.map((t, j) => (j === editing ? test : t)) : [...list, test];
            saveList(next, `${editing >= 0 ? 'edited' : 'added'} test ${test.name}`, () => setEditing(null));
          }}
        />
      ) : null}
    </div>
  );
}

/** Pointers of a save's errors that fall inside the edited test, relative to one of its parts. */
function errorsFor(error: unknown, index: number, part: 'request' | 'expect') {
  if (!(error instanceof ApiError)) return [];
  const prefix = `/tests/${index}/${part}`;
  return error.errors
    .filter((e) => e.pointer === prefix || e.pointer.startsWith(`${prefix}/`))
    .map((e) => ({ pointer: e.pointer.slice(prefix.length), message: e.message }));
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One test's name, request and expectations, with its outcome on the draft as it is typed. */
function TestEditor({
  tenant,
  initial,
  index,
  error,
  pending,
  onCancel,
  onSave,
}: {
  tenant: string;
  initial: PolicyTest;
  index: number;
  error: unknown;
  pending: boolean;
  onCancel: () => void;
  onSave: (t: PolicyTest) => void;
}) {
  const [name, setName] = useState(initial.name);
  const [request, setRequest] = useState(pretty(initial.request));
  const [expectText, setExpectText] = useState(pretty(initial.expect));
  const dirty = name !== initial.name || request !== pretty(initial.request) || expectText !== pretty(initial.expect);
  useUnsavedChangesPrompt(dirty);
  const test = useMemo(() => {
    const r = parse(request);
    const e = parse(expectText);
    return r && e && name.trim() ? ({ name: name.trim(), request: r, expect: e } as PolicyTest) : null;
  }, [name, request, expectText]);
  const live = useTestOutcomes(tenant, test ? [test] : undefined, { unsavedTests: true });
  const outcome = test ? live.data?.[0] : undefined;
  return (
    <form
      className="card test-editor"
      aria-label="Test editor"
      onSubmit={(e) => {
        e.preventDefault();
        if (test) onSave(test);
      }}
    >
      <h2>{initial.name ? `Edit “${initial.name}”` : 'New test'}</h2>
      <TextField label="Test name" value={name} onChange={setName} required />
      <div className="two-col">
        <JsonEditor label="Request" value={request} onChange={setRequest} rows={8} errors={errorsFor(error, index, 'request')} />
        <JsonEditor label="Expect" value={expectText} onChange={setExpectText} rows={8} errors={errorsFor(error, index, 'expect')} />
      </div>
      <p className="muted small">
        Expect may give <code>visible</code> (tool ids), <code>hidden</code> (<code>{'{ "id": "reason" }'}</code>), <code>decisions</code> (
        <code>{'{ "id": "allow" | "require_approval" }'}</code>) and <code>rejected</code> (true or false).
      </p>
      <div role="status" aria-label="This test on the draft">
        {!test ? (
          <p className="muted">Give a name and valid JSON to see how this test does on the draft.</p>
        ) : live.error ? (
          <Notice error={live.error} />
        ) : outcome ? (
          outcome.passed ? (
            <p>
              <Badge tone="ok">pass</Badge> on the draft
            </p>
          ) : (
            <>
              <p>
                <Badge tone="bad">fail</Badge> on the draft
              </p>
              <FailureList outcomes={[outcome]} />
            </>
          )
        ) : null}
      </div>
      <div className="button-row">
        <button type="submit" className="primary" disabled={!test || pending}>
          {pending ? 'Saving…' : 'Save test'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <Notice error={error} />
    </form>
  );
}
