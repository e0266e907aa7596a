import { memo, useCallback, useDeferredValue, useId, useMemo, useRef, useState } from 'react';
import type { EvaluationRequest, EvaluationResult, FilterReason, TenantPolicy, Tool } from '../../../../../policy-schemas/types.gen.ts';
import { Badge } from '../../../components/badge.tsx';
import { ListInput } from '../../../components/list-input.tsx';
import { Notice } from '../../../components/notice.tsx';
import { WINDOW_FROM, WindowedTable } from '../../../components/windowed-rows.tsx';
import { SelectField } from '../../../components/select-field.tsx';
import { explainFiltered, type ExplainContext, type Fix } from '../../../lib/filter-reasons.ts';
import { SaveAsTestButton } from '../../policy-tests/components/save-as-test-button.tsx';
import { usePublishedEvaluator } from '../api/get-published-evaluator.ts';
import { useSimulation } from '../api/simulate.ts';
import { TryCall } from './try-call.tsx';
import { currentLocation } from '../../../lib/router.ts';

type Outcome = { visible: boolean; detail: string };

function outcomes(r: EvaluationResult): Map<string, Outcome> {
  const m = new Map<string, Outcome>();
  for (const t of r.tools) m.set(t.id, { visible: true, detail: t.decision });
  for (const f of r.filtered) m.set(f.id, { visible: false, detail: f.reason });
  return m;
}

/** The `request` query parameter of the route, when it holds an evaluation request. */
function prefilledRequest(params: URLSearchParams): EvaluationRequest | null {
  const raw = params.get('request');
  if (!raw) return null;
  try {
    const r = JSON.parse(raw) as EvaluationRequest;
    return r && typeof r === 'object' && typeof r.subject === 'string' ? r : null;
  } catch {
    return null;
  }
}

function parseFacts(text: string): Record<string, string | number | boolean> {
  const facts: Record<string, string | number | boolean> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([^=\s]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const raw = m[2]!;
    facts[m[1]!] = raw === 'true' ? true : raw === 'false' ? false : /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  }
  return facts;
}

/**
 * What an agent would see under the saved draft policy, from the simulate endpoint. When the draft
 * changes (saved edits), rows that changed since the previous answer are marked.
 */
export function Simulator({
  tenant,
  policy,
  serverVersion,
  unsaved,
  stateNames,
  saveFormId,
  tools,
  onShowRole,
  canSaveTest = false,
}: {
  tenant: string;
  policy: TenantPolicy;
  serverVersion: number | undefined;
  unsaved: boolean;
  stateNames: string[];
  /** The policy form a "save" button here submits; absent for read-only users. */
  saveFormId?: string;
  /** The inventory by id, to explain why a tool is filtered. */
  tools: Map<string, Tool>;
  /** Brings a role of the policy editor into view (the fix for deny and allow reasons). */
  onShowRole: (role: string) => void;
  /** Offer "Save as test" (editors of the tenant). */
  canSaveTest?: boolean;
}) {
  const ids = useId();
  const subjects = Object.keys(policy.bindings ?? {});
  // A link (from a logged denial or an impact example) may carry the request to start from.
  const [initial] = useState(() => prefilledRequest(currentLocation().params));
  const [subject, setSubject] = useState(initial?.subject ?? subjects[0] ?? '');
  const [typedGroups, setGroups] = useState<string[] | null>(initial?.groups ?? null);
  const [state, setState] = useState(initial?.state && initial.state !== 'undefined' ? initial.state : '');
  const [factsText, setFactsText] = useState(
    initial?.facts
      ? Object.entries(initial.facts)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join('\n')
      : '',
  );
  const [profile, setProfile] = useState(initial?.profile ?? '');
  const [connections, setConnections] = useState<string[]>([]);
  const roleGroups = [...new Set((policy.bindings?.[subject.trim()] ?? []).flatMap((r) => policy.roles?.[r]?.groups ?? []))];
  // Until the person types groups, ask for the subject's own roles' groups: a new tenant's first
  // answer is what its subject sees, not a refusal of the `default` group.
  // roleGroups is a new array on every render: the groups keep their identity (and so the request
  // its own) for as long as their content stays the same.
  const groupsJson = JSON.stringify(typedGroups ?? roleGroups);
  const groups = useMemo(() => JSON.parse(groupsJson) as string[], [groupsJson]);
  const request = useMemo<EvaluationRequest | null>(() => {
    if (!subject.trim()) return null;
    const r: EvaluationRequest = { subject: subject.trim() };
    if (groups.length) r.groups = groups;
    if (state) r.state = state;
    const facts = parseFacts(factsText);
    if (Object.keys(facts).length) r.facts = facts;
    if (profile) r.profile = profile;
    if (connections.length) r.allowedConnectionIds = connections;
    return r;
  }, [subject, groups, state, factsText, profile, connections]);
  const deferred = useDeferredValue(request);
  const deferredPolicy = useDeferredValue(unsaved ? policy : undefined);
  const sim = useSimulation(tenant, deferred, serverVersion, deferredPolicy);

  // The previous answer for the same request under an earlier draft, to show what the edit changed.
  const history = useRef<{ key: string; version: number | undefined; result: EvaluationResult; previous: EvaluationResult | null } | null>(null);
  const key = JSON.stringify(deferred);
  // Only answers for saved drafts are remembered, so "the previous draft" is always a saved one.
  if (sim.data && !deferredPolicy && !sim.isPlaceholderData) {
    const h = history.current;
    if (!h || h.key !== key) history.current = { key, version: serverVersion, result: sim.data, previous: null };
    else if (h.version !== serverVersion && h.result !== sim.data) history.current = { key, version: serverVersion, result: sim.data, previous: h.result };
  }
  const previous = history.current?.key === key ? history.current.previous : null;

  // What is live: the latest published bundle evaluated by the runtime SDK on the same request.
  const published = usePublishedEvaluator(tenant);
  const [compareWith, setCompareWith] = useState<'published' | 'previous'>('published');
  const publishedResult = useMemo(() => {
    if (!published.data || !deferred) return null;
    try {
      return published.data.evaluate(deferred);
    } catch {
      return null;
    }
  }, [published.data, deferred]);
  const mode = compareWith === 'published' && published.data ? 'published' : 'previous';
  const baseline = mode === 'published' ? publishedResult : previous;
  // Derived once per answer and baseline, not on every keystroke or checkbox of the page: with
  // thousands of tools each pass over the answer costs milliseconds.
  const before = useMemo(() => (baseline ? outcomes(baseline) : null), [baseline]);
  const wasWord = mode === 'published' ? `v${published.data?.version ?? ''}:` : 'was';
  const changed = useCallback(
    (id: string, now: Outcome) => {
      const was = before?.get(id);
      return was && (was.visible !== now.visible || was.detail !== now.detail) ? was : null;
    },
    [before],
  );
  const r = sim.data;
  const changedCount = useMemo(() => (r && before ? [...outcomes(r)].filter(([id, o]) => changed(id, o)).length : 0), [r, before, changed]);
  // The filtered tools' explanations read the policy and the request as they were answered; an
  // edit in progress repaints them only once React has time (it is deferred).
  const explainPolicy = useDeferredValue(policy);
  const explainSubject = useDeferredValue(subject.trim());
  const explainProfile = useDeferredValue(profile);
  const explainContext = useMemo(
    () => ({ tenant, policy: explainPolicy, subject: explainSubject, groups: r?.groups ?? [], state: r?.state, profile: explainProfile }),
    [tenant, explainPolicy, explainSubject, r, explainProfile],
  );

  return (
    <section className="simulator" aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`}>Simulator</h2>
      <p className="muted">Evaluates the draft, with your unsaved edits, and compares it with what is published.</p>
      {unsaved ? (
        <div className="notice notice-warn" role="note">
          You have unsaved edits: the answer below includes them. Nothing is saved or published until you save the draft.{' '}
          {saveFormId ? (
            <button type="submit" form={saveFormId} className="primary">
              Save draft and simulate
            </button>
          ) : null}
        </div>
      ) : null}
      <form className="sim-form" aria-label="Simulation request" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor={`${ids}-subject`}>Subject</label>
          <input id={`${ids}-subject`} list={`${ids}-subjects`} value={subject} onChange={(e) => setSubject(e.target.value)} />
          <datalist id={`${ids}-subjects`}>
            {subjects.map((s) => (
              <option key={s} value={s} />
            ))}
          </datalist>
        </div>
        <div>
          <ListInput
            label="Requested groups"
            value={groups}
            onChange={setGroups}
            hint={
              typedGroups === null && roleGroups.length
                ? `The groups of ${subject.trim()}'s roles. Empty = default; * = every group.`
                : 'Empty = default; * = every group.'
            }
          />
          {roleGroups.length ? (
            <button type="button" className="link-button small" onClick={() => setGroups(null)}>
              Use the groups of {subject.trim()}'s roles
            </button>
          ) : null}
        </div>
        <SelectField label="State" empty="undefined (initial)" value={state} options={stateNames.filter((s) => s !== 'undefined')} onChange={setState} />
        <SelectField label="Profile" empty="none" value={profile} options={Object.keys(policy.profiles ?? {})} onChange={setProfile} />
        <div className="field">
          <label htmlFor={`${ids}-facts`}>Facts</label>
          <textarea id={`${ids}-facts`} rows={2} placeholder="hostSession=ready" value={factsText} onChange={(e) => setFactsText(e.target.value)} />
        </div>
        <ListInput label="Allowed connection ids" value={connections} onChange={setConnections} />
      </form>
      {sim.error ? <Notice error={sim.error} /> : null}
      {r ? (
        <div className="sim-result" aria-live="polite">
          <p>
            Roles: {r.roles.length ? r.roles.join(', ') : <em>none</em>} · Groups: {r.groups.join(', ') || <em>none</em>} · State: {r.state}
          </p>
          {canSaveTest && deferred ? <SaveAsTestButton tenant={tenant} request={deferred} result={r} /> : null}
          {r.rejected ? (
            <div className="notice notice-error" role="alert">
              Request rejected ({r.rejected.reason}): no role of {subject.trim()} permits the group(s) {r.rejected.groups.join(', ')}.
              {roleGroups.length ? (
                <>
                  {' '}
                  Its roles permit {roleGroups.join(', ')}.{' '}
                  <button type="button" className="link-button" onClick={() => setGroups(null)}>
                    Ask for those instead
                  </button>
                </>
              ) : (
                ' Its roles permit no group: give one of its roles groups in the policy.'
              )}
            </div>
          ) : null}
          <fieldset className="compare">
            <legend>Compare with</legend>
            <label className="check">
              <input
                type="radio"
                name={`${ids}-compare`}
                checked={mode === 'published'}
                disabled={!published.data}
                onChange={() => setCompareWith('published')}
              />
              {published.data ? `published v${published.data.version}` : 'published (nothing yet)'}
            </label>
            <label className="check">
              <input type="radio" name={`${ids}-compare`} checked={mode === 'previous'} onChange={() => setCompareWith('previous')} />
              previous draft
            </label>
          </fieldset>
          {before ? (
            <p role="status" className="notice notice-info">
              {mode === 'published'
                ? changedCount
                  ? `${changedCount} tool(s) differ from published v${published.data!.version}.`
                  : `Same as published v${published.data!.version}.`
                : changedCount
                  ? `${changedCount} tool(s) changed since the previous draft.`
                  : 'No change since the previous draft.'}
            </p>
          ) : mode === 'previous' ? (
            <p className="muted small">Save an edit to see what it changes here.</p>
          ) : null}
          <VisibleTools tools={r.tools} changed={changed} wasWord={wasWord} />
          <FilteredTools filtered={r.filtered} changed={changed} wasWord={wasWord} explain={explainContext} tools={tools} onShowRole={onShowRole} />
          {deferred && !r.rejected ? <TryCall tenant={tenant} request={deferred} unsaved={deferredPolicy} visible={r.tools} /> : null}
        </div>
      ) : sim.isFetching ? (
        <p className="muted">Simulating…</p>
      ) : !subject.trim() ? (
        <p className="muted">
          {subjects.length
            ? 'Name a subject to see what it would be shown.'
            : 'No subject is bound to a role yet: add a binding to the policy, or name a subject above.'}
        </p>
      ) : null}
    </section>
  );
}

/** A filtered tool's reason in words, with its fix: a link, or a button that shows the role. */
function Why({ reason, context, onShowRole }: { reason: FilterReason; context: ExplainContext; onShowRole: (role: string) => void }) {
  const why = explainFiltered(reason, context);
  const fix: Fix | undefined = why.fix;
  return (
    <>
      {why.text}{' '}
      {fix?.role ? (
        <button type="button" className="link-button" onClick={() => onShowRole(fix.role!)}>
          {fix.label}
        </button>
      ) : fix?.href ? (
        <a href={fix.href}>{fix.label}</a>
      ) : null}
    </>
  );
}

type Changed = (id: string, now: Outcome) => Outcome | null;

/** The tools the subject would see; a long list renders only the rows scrolled into view. */
const VisibleTools = memo(function VisibleTools({ tools, changed, wasWord }: { tools: EvaluationResult['tools']; changed: Changed; wasWord: string }) {
  return (
    <WindowedTable
      label="Visible tools"
      columns={['Tool', 'Decision']}
      caption={`Visible tools (${tools.length})`}
      items={tools}
      row={(t) => <VisibleRow key={t.id} tool={t} was={changed(t.id, { visible: true, detail: t.decision })} wasWord={wasWord} />}
    />
  );
});

const VisibleRow = memo(function VisibleRow({ tool: t, was, wasWord }: { tool: EvaluationResult['tools'][number]; was: Outcome | null; wasWord: string }) {
  return (
    <tr className={was ? 'changed' : undefined}>
      <td className="mono">{t.id}</td>
      <td>
        <Badge tone={t.decision === 'allow' ? 'ok' : 'warn'}>{t.decision}</Badge>
        {t.constraints?.length ? (
          <span className="muted small">
            {' '}
            · arguments checked: {t.constraints.map((k) => `${k.reason} (${k.otherwise === 'deny' ? 'else denied' : 'else approval'})`).join('; ')}
          </span>
        ) : null}
        {was ? (
          <span className="muted">
            {' '}
            {wasWord} {was.visible ? was.detail : `filtered (${was.detail})`}
          </span>
        ) : null}
      </td>
    </tr>
  );
});

type Filtered = EvaluationResult['filtered'][number];
type ExplainBase = Omit<ExplainContext, 'toolId' | 'tool'>;

/**
 * The hidden tools: first how many for each reason, then the tools themselves. A short list is
 * shown whole; a long one (an inventory of thousands) shows the tools of the reason asked for, or
 * the ones that changed, in a table that renders only the rows in view.
 */
const FilteredTools = memo(function FilteredTools({
  filtered,
  changed,
  wasWord,
  explain,
  tools,
  onShowRole,
}: {
  filtered: EvaluationResult['filtered'];
  changed: Changed;
  wasWord: string;
  explain: ExplainBase;
  tools: Map<string, Tool>;
  onShowRole: (role: string) => void;
}) {
  const ids = useId();
  const [shown, setShown] = useState<FilterReason | 'changed' | 'all' | 'none' | null>(null);
  const byReason = useMemo(() => {
    const counts = new Map<FilterReason, number>();
    for (const f of filtered) counts.set(f.reason, (counts.get(f.reason) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1]);
  }, [filtered]);
  const changedOnes = useMemo(() => filtered.filter((f) => changed(f.id, { visible: false, detail: f.reason })), [filtered, changed]);
  const long = filtered.length > WINDOW_FROM;
  // A choice the current answer no longer has (its reason or its changes gone) falls back to the default.
  const chosen =
    shown === 'changed'
      ? changedOnes.length
        ? shown
        : null
      : shown && shown !== 'all' && shown !== 'none' && !byReason.some(([r]) => r === shown)
        ? null
        : shown;
  // Until something is chosen, a long list opens on what changed, if anything did; a short one shows every tool.
  const showing = chosen === 'none' ? null : (chosen ?? (long ? (changedOnes.length ? 'changed' : null) : 'all'));
  const rows = useMemo(
    () => (showing === 'all' ? filtered : showing === 'changed' ? changedOnes : showing ? filtered.filter((f) => f.reason === showing) : []),
    [showing, filtered, changedOnes],
  );
  // The same button again closes a long list's table, or shows a short list whole again.
  const pick = (what: NonNullable<typeof showing>) => setShown(showing === what ? (long ? 'none' : 'all') : what);
  return (
    <div className="filtered-tools">
      <h3 id={`${ids}-reasons`} className="small">
        Hidden tools by reason ({filtered.length})
      </h3>
      <ul className="reason-summary" aria-labelledby={`${ids}-reasons`}>
        {byReason.map(([reason, count]) => (
          <li key={reason}>
            <button type="button" className="link-button" aria-pressed={showing === reason} onClick={() => pick(reason)}>
              {reason}: {count}
            </button>
          </li>
        ))}
        {changedOnes.length ? (
          <li>
            <button type="button" className="link-button" aria-pressed={showing === 'changed'} onClick={() => pick('changed')}>
              changed: {changedOnes.length}
            </button>
          </li>
        ) : null}
        {long ? (
          <li>
            <button type="button" className="link-button" aria-pressed={showing === 'all'} onClick={() => pick('all')}>
              all: {filtered.length}
            </button>
          </li>
        ) : null}
      </ul>
      {showing ? (
        <WindowedTable
          className="filtered-tools"
          label="Filtered tools"
          columns={['Tool', 'Reason', 'Why']}
          caption={showing === 'all' ? `Filtered tools (${filtered.length})` : `Filtered tools: ${showing} (${rows.length} of ${filtered.length})`}
          items={rows}
          row={(f) => (
            <FilteredRow
              key={f.id}
              item={f}
              was={changed(f.id, { visible: false, detail: f.reason })}
              wasWord={wasWord}
              explain={explain}
              tool={tools.get(f.id)}
              onShowRole={onShowRole}
            />
          )}
        />
      ) : (
        <p className="muted small">Choose a reason to list its tools.</p>
      )}
    </div>
  );
});

const FilteredRow = memo(function FilteredRow({
  item: f,
  was,
  wasWord,
  explain,
  tool,
  onShowRole,
}: {
  item: Filtered;
  was: Outcome | null;
  wasWord: string;
  explain: ExplainBase;
  tool: Tool | undefined;
  onShowRole: (role: string) => void;
}) {
  return (
    <tr className={was ? 'changed' : undefined}>
      <td className="mono">{f.id}</td>
      <td>
        <Badge tone="muted">{f.reason}</Badge>
        {was ? (
          <span className="muted">
            {' '}
            {wasWord} {was.visible ? `visible (${was.detail})` : was.detail}
          </span>
        ) : null}
      </td>
      <td className="small">
        <Why reason={f.reason} context={{ ...explain, toolId: f.id, tool }} onShowRole={onShowRole} />
      </td>
    </tr>
  );
});
