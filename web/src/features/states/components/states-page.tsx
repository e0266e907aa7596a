import { useId, useState } from 'react';
import type { State } from '../../../../../policy-schemas/types.gen.ts';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { CreateForm } from '../../../components/create-form.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { canEditInventory } from '../../../lib/permissions.ts';
import { href } from '../../../lib/router.ts';
import { formats } from '../../../lib/schema.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { useTools } from '../../tools/api/get-tools.ts';
import { useStates } from '../api/get-states.ts';
import { useDeleteState, useSaveState } from '../api/save-state.ts';
import { ANY, StateGraph, transitions } from './state-graph.tsx';

export function StatesPage({ session }: { session: Session }) {
  const states = useStates();
  const tools = useTools();
  const editable = canEditInventory(session);
  if (states.isPending || tools.isPending) return <Loading what="states" />;
  if (states.error || tools.error) return <Notice error={states.error ?? tools.error} />;
  const edges = transitions(tools.data);
  return (
    <section className="page">
      <PageHeader title="States" subtitle="Workflow states; the tools' state fields define the transitions." />
      <StateGraph states={states.data} tools={tools.data} />
      <div className="split">
        <div className="table-wrap">
          <DataTable label="States" columns={['State', 'Description', 'Leads to']} actions={editable}>
            {states.data.map((s) => (
              <StateRow key={s.name} state={s} editable={editable} next={edges.filter((e) => e.from === s.name || e.from === ANY)} />
            ))}
          </DataTable>
        </div>
        {editable ? (
          <aside className="side-panel">
            <NewState />
          </aside>
        ) : null}
      </div>
    </section>
  );
}

function StateRow({ state, editable, next }: { state: State; editable: boolean; next: { to: string; tools: string[] }[] }) {
  const [editing, setEditing] = useState(false);
  const [description, setDescription] = useState(state.description ?? '');
  const [saved, setSaved] = useState<string | null>(null);
  const save = useSaveState();
  const del = useDeleteState();
  const ids = useId();
  return (
    <tr>
      <td className="mono">{state.name}</td>
      <td>
        {editing ? (
          <form
            className="row-inline"
            onSubmit={(e) => {
              e.preventDefault();
              setSaved(null);
              save.mutate(
                { state: { ...state, description }, create: false },
                {
                  onSuccess: (r) => {
                    setEditing(false);
                    setSaved(`Saved ${r.name}.`);
                  },
                },
              );
            }}
          >
            <label htmlFor={`${ids}-d`} className="sr-only">
              Description of {state.name}
            </label>
            <input id={`${ids}-d`} value={description} onChange={(e) => setDescription(e.target.value)} />
            <button type="submit" className="primary">
              Save
            </button>
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </form>
        ) : (
          state.description
        )}
        <Notice error={save.error ?? del.error} success={saved} />
      </td>
      <td>
        {next.map((e) => (
          <div key={`${e.to}`}>
            → <strong>{e.to}</strong>{' '}
            <span className="muted">
              via{' '}
              {e.tools.map((t, i) => (
                <span key={t}>
                  {i ? ', ' : ''}
                  <a href={href(`/tools/${encodeURIComponent(t)}`)}>{t}</a>
                </span>
              ))}
            </span>
          </div>
        ))}
      </td>
      {editable ? (
        <td className="actions">
          <button
            type="button"
            onClick={() => {
              setDescription(state.description ?? '');
              setEditing(true);
            }}
            aria-label={`Edit ${state.name}`}
          >
            Edit
          </button>
          {state.name !== 'undefined' ? (
            <ConfirmButton question={`Delete state ${state.name}?`} label={`Delete ${state.name}`} onConfirm={() => del.mutate(state)}>
              Delete
            </ConfirmButton>
          ) : null}
        </td>
      ) : null}
    </tr>
  );
}

function NewState() {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [msg, setMsg] = useState<string | null>(null);
  const save = useSaveState();
  return (
    <CreateForm
      title="New state"
      submit="Create state"
      busy={save.isPending}
      error={save.error}
      success={msg}
      onSubmit={() => {
        setMsg(null);
        save.mutate(
          { state: { name, description }, create: true },
          {
            onSuccess: (s) => {
              setMsg(`Created ${s.name}.`);
              setName('');
              setDescription('');
            },
          },
        );
      }}
    >
      <TextField label="Name" required format={formats.stateName} value={name} onChange={setName} />
      <TextField label="Description" value={description} onChange={setDescription} />
    </CreateForm>
  );
}
