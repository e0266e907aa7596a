import { useId, useMemo, useState } from 'react';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { BudgetFields } from '../../../components/budget-fields.tsx';
import { CheckGroup } from '../../../components/check-group.tsx';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { DraftConflict } from '../../../components/conflict-view.tsx';
import { JsonEditor } from '../../../components/json-editor.tsx';
import { ListInput } from '../../../components/list-input.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { pretty } from '../../../lib/json.ts';
import { canEditInventory } from '../../../lib/permissions.ts';
import { href, navigate } from '../../../lib/router.ts';
import { effects, formatProblem, formats, hints, limits, toolStatuses } from '../../../lib/schema.ts';
import { useDraft } from '../../../lib/use-draft.ts';
import { flash } from '../../../lib/flash.ts';
import { useInputSchemaProblems } from '../../../lib/input-schema-rules.ts';
import { ToolUsagePanel } from '../../insight/components/tool-usage-panel.tsx';
import type { Session } from '../../auth/api/get-session.ts';
import { useGroups } from '../../groups/api/get-groups.ts';
import { useStates } from '../../states/api/get-states.ts';
import { useDeleteTool } from '../api/delete-tool.ts';
import { useTool } from '../api/get-tool.ts';
import { useSaveTool } from '../api/save-tool.ts';
import { SchemaText } from '../../../components/schema-text.tsx';
import { SelectField } from '../../../components/select-field.tsx';
import { ApprovalOutcome } from './approval-outcome.tsx';
import { ReviewPanel } from './review-panel.tsx';
import { mcpName } from '../mcp-name.ts';
import { ProviderNote } from './provider-note.tsx';
import { ToolBadges } from './tool-badges.tsx';

const template: Tool = {
  id: '',
  description: '',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  effect: 'read_only',
  groups: ['default'],
  redaction: { allow: [] },
};

export function ToolPage({ id, session }: { id: string | null; session: Session }) {
  const tool = useTool(id ?? '');
  if (id === null) return <ToolEditor server={template} create session={session} />;
  if (tool.isPending) return <Loading what="tool" />;
  if (tool.error) return <Notice error={tool.error} />;
  return <ToolEditor key={tool.data.id} server={tool.data} create={false} session={session} />;
}

function ToolEditor({ server, create, session }: { server: Tool; create: boolean; session: Session }) {
  const editable = canEditInventory(session);
  const draft = useDraft<Tool>(server);
  const t = draft.value!;
  const [inputText, setInputTextState] = useState(() => pretty(server.inputSchema));
  const [outputText, setOutputTextState] = useState(() => (server.outputSchema ? pretty(server.outputSchema) : ''));
  // The draft follows the JSON texts whenever they parse, so a conflict's "your changes" and its
  // re-apply include schema edits.
  const setInputText = (text: string, sync = true) => {
    setInputTextState(text);
    if (!sync) return;
    try {
      const parsed = JSON.parse(text) as Tool['inputSchema'];
      draft.update((v) => ({ ...v, inputSchema: parsed }));
    } catch {
      /* shown in the editor */
    }
  };
  const setOutputText = (text: string, sync = true) => {
    setOutputTextState(text);
    if (!sync) return;
    try {
      const parsed = text.trim() ? (JSON.parse(text) as Tool['outputSchema']) : undefined;
      draft.update((v) => {
        const next = { ...v };
        if (parsed) next.outputSchema = parsed;
        else delete next.outputSchema;
        return next;
      });
    } catch {
      /* shown in the editor */
    }
  };
  const setTexts = (tool: Tool) => {
    setInputText(pretty(tool.inputSchema), false);
    setOutputText(tool.outputSchema ? pretty(tool.outputSchema) : '', false);
  };
  const [reason, setReason] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const [approved, setApproved] = useState<Tool[] | null>(null);
  const [localError, setLocalError] = useState<string | null>(null);
  const save = useSaveTool();
  const del = useDeleteTool();
  const groups = useGroups();
  const states = useStates();
  const ids = useId();
  const idProblem = create ? formatProblem(formats.toolId, t.id) : null;
  const textsDirty = inputText !== pretty(server.inputSchema) || outputText !== (server.outputSchema ? pretty(server.outputSchema) : '');
  const dirty = draft.dirty || textsDirty;

  const set = <K extends keyof Tool>(key: K, value: Tool[K] | undefined) =>
    draft.update((v) => {
      const next = { ...v };
      if (value === undefined) delete next[key];
      else next[key] = value;
      return next;
    });

  const serverErrors = save.error instanceof ApiError ? save.error.errors : [];
  // The restricted-subset rules run as you type; the server's last answer is shown only for the
  // text it judged, so no error stays pinned to a line that has since changed.
  const [judgedText, setJudgedText] = useState<string | null>(null);
  const liveInputErrors = useInputSchemaProblems(inputText, server.source?.kind !== 'mcp');
  const inputErrors = useMemo(() => {
    const fromServer =
      judgedText === inputText
        ? serverErrors.filter((e) => e.pointer.startsWith('/inputSchema')).map((e) => ({ ...e, pointer: e.pointer.slice('/inputSchema'.length) }))
        : [];
    // A value the live check already names (a mistyped `type`) is not repeated in the server's words.
    const seen = new Set(liveInputErrors.map((e) => e.pointer));
    return [...liveInputErrors, ...fromServer.filter((e) => !seen.has(e.pointer))];
  }, [serverErrors, liveInputErrors, judgedText, inputText]);
  const outputErrors = useMemo(
    () => serverErrors.filter((e) => e.pointer.startsWith('/outputSchema')).map((e) => ({ ...e, pointer: e.pointer.slice('/outputSchema'.length) })),
    [serverErrors],
  );

  const build = (): Tool | null => {
    try {
      const inputSchema = JSON.parse(inputText) as Tool['inputSchema'];
      const outputSchema = outputText.trim() ? (JSON.parse(outputText) as Tool['outputSchema']) : undefined;
      const next: Tool = { ...t, inputSchema };
      if (outputSchema) next.outputSchema = outputSchema;
      else delete next.outputSchema;
      return next;
    } catch {
      setLocalError('The input or output schema is not valid JSON; fix the marked line first.');
      return null;
    }
  };

  const submit = (body: Tool) => {
    setJudgedText(inputText);
    setSaved(null);
    setLocalError(null);
    save.mutate(
      { tool: body, create, reason: reason || undefined },
      {
        onSuccess: (result) => {
          draft.reset();
          setTexts(result);
          setReason('');
          setSaved(create ? `Created ${result.id}.` : `Saved ${result.id} (version ${result.version ?? '?'}).`);
          if (create) {
            // The new page shows the answer: a message kept only in this form would be lost.
            flash(`Created ${result.id}.`, `/tools/${encodeURIComponent(result.id)}`);
            navigate(`/tools/${encodeURIComponent(result.id)}`, { force: true });
          }
        },
        onError: (err) => {
          draft.onSaveError(err);
        },
      },
    );
  };

  const stateNames = (states.data ?? []).map((s) => s.name);
  const every = !t.availableInStates || t.availableInStates.includes('*');

  return (
    <section className="page">
      <PageHeader
        title={create ? 'New tool' : <span className="mono">{server.id}</span>}
        subtitle={
          create ? (
            'Add a tool to the inventory.'
          ) : (
            <>
              <ToolBadges tool={server} /> version {server.version ?? '?'}
              {server.updatedAt ? ` · updated ${new Date(server.updatedAt).toLocaleString()}` : ''}
              {mcpName(server, true) !== null ? (
                <>
                  {' · named '}
                  <code>{mcpName(server, true)}</code> on MCP server {server.source?.server}
                </>
              ) : null}
            </>
          )
        }
        actions={<a href={href('/tools')}>Back to tools</a>}
      />
      {approved ? <ApprovalOutcome tools={approved} /> : null}
      {server.review ? <ReviewPanel tool={server} editable={editable} onApproved={(r) => setApproved(r.approved.length ? r.approved : null)} /> : null}
      {create ? null : <ToolUsagePanel id={server.id} />}
      <DraftConflict
        draft={draft}
        busy={save.isPending}
        submit={(merged) => {
          setTexts(merged);
          submit(merged);
        }}
        onDiscard={(current) => {
          save.reset();
          setTexts(current);
        }}
      />
      <form
        className="editor-form"
        aria-label={create ? 'New tool' : `Edit ${server.id}`}
        onSubmit={(e) => {
          e.preventDefault();
          const body = build();
          if (body) submit(body);
        }}
      >
        <fieldset disabled={!editable} className="plain">
          <div className="form-grid">
            <div className="field">
              <label htmlFor={`${ids}-id`}>Tool id</label>
              <input
                id={`${ids}-id`}
                className="mono"
                value={t.id}
                required
                readOnly={!create}
                maxLength={limits.toolIdMax}
                placeholder="core__my-tool"
                aria-invalid={idProblem ? true : undefined}
                aria-describedby={idProblem ? `${ids}-id-problem ${ids}-id-hint` : `${ids}-id-hint`}
                onChange={(e) => {
                  e.target.setCustomValidity(create ? (formatProblem(formats.toolId, e.target.value) ?? '') : '');
                  set('id', e.target.value);
                }}
              />
              {idProblem ? (
                <p id={`${ids}-id-problem`} className="field-error">
                  {idProblem}
                </p>
              ) : null}
              <small id={`${ids}-id-hint`} className="hint">
                <SchemaText text={hints.toolId} />
              </small>
            </div>
            <SelectField label="Effect" value={t.effect} options={effects} onChange={(v) => set('effect', v as Tool['effect'])} />
            <SelectField label="Status" value={t.status ?? 'active'} options={toolStatuses} onChange={(v) => set('status', v as Tool['status'])} />
            <div className="field span-all">
              <label htmlFor={`${ids}-desc`}>Description</label>
              <textarea
                id={`${ids}-desc`}
                rows={2}
                maxLength={limits.descriptionMax}
                value={t.description}
                onChange={(e) => set('description', e.target.value)}
              />
            </div>
          </div>

          <div className="two-col">
            <JsonEditor label="Input schema" value={inputText} onChange={(t) => setInputText(t)} errors={inputErrors} />
            <JsonEditor label="Output schema (optional)" optional value={outputText} onChange={(t) => setOutputText(t)} errors={outputErrors} />
          </div>
          <p className="hint">
            <SchemaText text={hints.inputSchema} />
          </p>
          {/* The draft follows the text whenever it parses: the note judges what is being typed. */}
          <ProviderNote inputSchema={t.inputSchema} />

          <fieldset className="section">
            <legend>Redaction</legend>
            <label className="check">
              <input type="checkbox" checked={!!t.redaction} onChange={(e) => set('redaction', e.target.checked ? { allow: [] } : undefined)} />
              Keep only listed output fields
            </label>
            {t.redaction ? (
              <ListInput
                label="Kept output paths"
                value={t.redaction.allow}
                onChange={(allow) => set('redaction', { allow })}
                placeholder="entities[].id, truncated"
                hint={hints.redaction}
              />
            ) : (
              <p className="notice notice-warn">Without redaction this tool never enters a bundle (reason no_redaction).</p>
            )}
          </fieldset>

          <div className="two-col">
            <CheckGroup legend="Groups" options={(groups.data ?? []).map((g) => g.name)} value={t.groups ?? ['default']} onChange={(v) => set('groups', v)} />
            <fieldset className="section">
              <legend>States</legend>
              <SelectField
                label="After a successful call, move to"
                empty="(stay in the current state)"
                value={t.state}
                options={stateNames}
                onChange={(v) => set('state', v || undefined)}
              />
              <label className="check">
                <input type="checkbox" checked={every} onChange={(e) => set('availableInStates', e.target.checked ? undefined : ['undefined'])} />
                Available in every state
              </label>
              {!every ? (
                <CheckGroup legend="Available in" options={stateNames} value={t.availableInStates ?? []} onChange={(v) => set('availableInStates', v)} />
              ) : null}
            </fieldset>
          </div>

          <RequiresEditor value={t.requires ?? []} onChange={(r) => set('requires', r.length ? r : undefined)} />

          <div className="two-col">
            <fieldset className="section">
              <legend>Parallelism and connections</legend>
              <label className="check">
                <input
                  type="checkbox"
                  checked={t.parallel?.safe ?? false}
                  onChange={(e) => set('parallel', { ...(t.parallel ?? {}), safe: e.target.checked })}
                />
                Safe to run in parallel
              </label>
              <div className="field">
                <label htmlFor={`${ids}-rk`}>Resource key (calls sharing it run one at a time)</label>
                <input
                  id={`${ids}-rk`}
                  value={t.parallel?.resourceKey ?? ''}
                  maxLength={limits.resourceKeyMax}
                  onChange={(e) => {
                    const { resourceKey: _old, ...rest } = t.parallel ?? { safe: false };
                    set(
                      'parallel',
                      e.target.value ? { ...rest, safe: rest.safe ?? false, resourceKey: e.target.value } : { ...rest, safe: rest.safe ?? false },
                    );
                  }}
                />
              </div>
              <label className="check">
                <input type="checkbox" checked={t.requiresConnection ?? false} onChange={(e) => set('requiresConnection', e.target.checked)} />
                Requires a connection (granted connection id passed out of band)
              </label>
            </fieldset>
            <BudgetFields value={t.budgets} onChange={(b) => set('budgets', b)} />
          </div>

          {!create ? (
            <details className="section">
              <summary>Source and hashes (set by the server)</summary>
              <dl className="meta">
                <dt>Source</dt>
                <dd>
                  {server.source?.kind ?? 'core'}
                  {server.source?.server ? ` · server ${server.source.server}` : ''}
                  {server.source?.originalName ? ` · ${server.source.originalName}` : ''}
                </dd>
                <dt>Definition hash</dt>
                <dd className="mono">{server.definitionHash ?? '—'}</dd>
                <dt>Approved hash</dt>
                <dd className="mono">{server.source?.approvedDefinitionHash ?? '—'}</dd>
                <dt>Created</dt>
                <dd>{server.createdAt ?? '—'}</dd>
              </dl>
            </details>
          ) : null}

          {editable ? (
            <div className="save-bar">
              <div className="field grow">
                <label htmlFor={`${ids}-reason`}>Reason (kept in the audit log)</label>
                <input id={`${ids}-reason`} value={reason} onChange={(e) => setReason(e.target.value)} />
              </div>
              <button type="submit" className="primary" disabled={save.isPending || (!dirty && !create)}>
                {save.isPending ? 'Saving…' : create ? 'Create tool' : 'Save changes'}
              </button>
              {dirty ? <span className="muted">Unsaved changes</span> : null}
              {!create ? (
                <ConfirmButton
                  question={`Delete ${server.id}?`}
                  disabled={del.isPending}
                  onConfirm={() =>
                    del.mutate(
                      { id: server.id, version: server.version },
                      {
                        onSuccess: () => {
                          flash(`Deleted ${server.id}.`, '/tools');
                          navigate('/tools', { force: true });
                        },
                      },
                    )
                  }
                >
                  Delete
                </ConfirmButton>
              ) : null}
            </div>
          ) : null}
        </fieldset>
        {localError ? (
          <div role="alert" className="notice notice-error">
            {localError}
          </div>
        ) : null}
        {draft.conflict ? null : <Notice error={save.error ?? del.error} success={saved} />}
      </form>
    </section>
  );
}

type Gate = NonNullable<Tool['requires']>[number];

function parseScalar(s: string): string | number | boolean {
  if (s === 'true') return true;
  if (s === 'false') return false;
  if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
  return s;
}

function RequiresEditor({ value, onChange }: { value: Gate[]; onChange: (v: Gate[]) => void }) {
  const ids = useId();
  return (
    <fieldset className="section">
      <legend>Runtime gates</legend>
      <p className="hint">{hints.requires} Values are comma-separated; true, false and numbers are typed.</p>
      {value.map((g, i) => (
        <div key={i} className="row-inline">
          <div className="field">
            <label htmlFor={`${ids}-fact-${i}`}>Fact {i + 1}</label>
            <input
              id={`${ids}-fact-${i}`}
              value={g.fact}
              aria-invalid={formatProblem(formats.factName, g.fact) ? true : undefined}
              aria-describedby={formatProblem(formats.factName, g.fact) ? `${ids}-fact-${i}-problem` : undefined}
              onChange={(e) => {
                e.target.setCustomValidity(formatProblem(formats.factName, e.target.value) ?? '');
                onChange(value.map((x, j) => (j === i ? { ...x, fact: e.target.value } : x)));
              }}
            />
            {formatProblem(formats.factName, g.fact) ? (
              <p id={`${ids}-fact-${i}-problem`} className="field-error">
                {formatProblem(formats.factName, g.fact)}
              </p>
            ) : null}
          </div>
          <div className="field grow">
            <label htmlFor={`${ids}-in-${i}`}>Fact {i + 1} is one of</label>
            <input
              id={`${ids}-in-${i}`}
              defaultValue={g.in.map(String).join(', ')}
              onChange={(e) => {
                const vals = e.target.value
                  .split(',')
                  .map((s) => s.trim())
                  .filter(Boolean)
                  .map(parseScalar);
                onChange(value.map((x, j) => (j === i ? { ...x, in: (vals.length ? vals : ['']) as Gate['in'] } : x)));
              }}
            />
          </div>
          <button type="button" onClick={() => onChange(value.filter((_, j) => j !== i))} aria-label={`Remove gate ${i + 1}`}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...value, { fact: '', in: ['ready'] }])}>
        Add gate
      </button>
    </fieldset>
  );
}
