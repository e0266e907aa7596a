import { useId, useState } from 'react';
import type { Group, Tool } from '../../../../../policy-schemas/types.gen.ts';
import { CheckGroup } from '../../../components/check-group.tsx';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { DraftConflict } from '../../../components/conflict-view.tsx';
import { CreateForm } from '../../../components/create-form.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { canEditInventory } from '../../../lib/permissions.ts';
import { href, useLocation, replaceRoute } from '../../../lib/router.ts';
import { formats } from '../../../lib/schema.ts';
import { useDraft } from '../../../lib/use-draft.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { useBulkGroup } from '../../tools/api/patch-tool.ts';
import { useTools } from '../../tools/api/get-tools.ts';
import { useGroups } from '../api/get-groups.ts';
import { useDeleteGroup, useSaveGroup } from '../api/save-group.ts';

/** Expands a group through `includes`, transitively. */
function expand(name: string, byName: Map<string, Group>, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  for (const inc of byName.get(name)?.includes ?? []) expand(inc, byName, seen);
  return seen;
}

export function GroupsPage({ session }: { session: Session }) {
  const groups = useGroups();
  const tools = useTools();
  const loc = useLocation();
  const editable = canEditInventory(session);
  const selected = loc.params.get('group');
  if (groups.isPending) return <Loading what="groups" />;
  if (groups.error) return <Notice error={groups.error} />;
  const byName = new Map(groups.data.map((g) => [g.name, g]));
  const members = (g: string) => (tools.data ?? []).filter((t) => (t.groups ?? ['default']).includes(g));
  const current = selected ? byName.get(selected) : undefined;
  return (
    <section className="page">
      <PageHeader title="Groups" subtitle="Named sets of tools. Requesting a group also grants the groups it includes." />
      <div className="split">
        <div className="table-wrap">
          <DataTable label="Groups" columns={['Group', 'Includes', 'Members']}>
            {groups.data.map((g) => {
              const direct = members(g.name);
              const all = [...expand(g.name, byName)];
              return (
                <tr key={g.name} className={g.name === selected ? 'selected' : undefined}>
                  <td>
                    <a href={href(`/groups?group=${encodeURIComponent(g.name)}`)} aria-current={g.name === selected ? 'true' : undefined}>
                      {g.name}
                    </a>
                    <div className="muted clamp">{g.description}</div>
                  </td>
                  <td>
                    <span className="chips">
                      {(g.includes ?? []).map((i) => (
                        <span key={i} className="chip">
                          {i}
                        </span>
                      ))}
                    </span>
                    {all.length > 1 + (g.includes?.length ?? 0) ? <div className="muted">expands to {all.length - 1} groups</div> : null}
                  </td>
                  <td>
                    <a href={href(`/tools?group=${encodeURIComponent(g.name)}`)}>{direct.length} tool(s)</a>
                  </td>
                </tr>
              );
            })}
          </DataTable>
        </div>
        <aside className="side-panel">
          {current ? (
            <GroupEditor key={current.name} group={current} all={groups.data} members={members(current.name)} allTools={tools.data ?? []} editable={editable} />
          ) : editable ? (
            <NewGroup />
          ) : (
            <p className="muted">Choose a group to see its members.</p>
          )}
        </aside>
      </div>
    </section>
  );
}

function GroupEditor({ group, all, members, allTools, editable }: { group: Group; all: Group[]; members: Tool[]; allTools: Tool[]; editable: boolean }) {
  const draft = useDraft<Group>(group);
  const save = useSaveGroup();
  const del = useDeleteGroup();
  const [msg, setMsg] = useState<string | null>(null);
  const ids = useId();
  const g = draft.value!;
  const submit = (body: Group) =>
    save.mutate(
      { group: body, create: false },
      {
        onSuccess: (r) => {
          draft.reset();
          setMsg(`Saved ${r.name}.`);
        },
        onError: (e) => draft.onSaveError(e),
      },
    );
  return (
    <form
      aria-label={`Group ${group.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        setMsg(null);
        submit(g);
      }}
    >
      <h2>{group.name}</h2>
      <DraftConflict draft={draft} submit={submit} busy={save.isPending} />
      <fieldset className="plain" disabled={!editable}>
        <div className="field">
          <label htmlFor={`${ids}-d`}>Description</label>
          <textarea id={`${ids}-d`} rows={2} value={g.description ?? ''} onChange={(e) => draft.update((v) => ({ ...v, description: e.target.value }))} />
        </div>
        <CheckGroup
          legend="Includes"
          options={all.map((x) => x.name).filter((n) => n !== group.name)}
          value={g.includes ?? []}
          onChange={(includes) => draft.update((v) => ({ ...v, includes }))}
        />
        {editable ? (
          <div className="button-row">
            <button type="submit" className="primary" disabled={!draft.dirty || save.isPending}>
              Save group
            </button>
            {group.name !== 'default' ? (
              <ConfirmButton question={`Delete group ${group.name}?`} onConfirm={() => del.mutate(group, { onSuccess: () => replaceRoute('/groups') })}>
                Delete
              </ConfirmButton>
            ) : null}
          </div>
        ) : null}
      </fieldset>
      {draft.conflict ? null : <Notice error={save.error ?? del.error} success={msg} />}
      <Members group={group.name} members={members} all={allTools} editable={editable} />
    </form>
  );
}

/** The tools in a group, added and removed one at a time (the tools table does it in bulk). */
function Members({ group, members, all, editable }: { group: string; members: Tool[]; all: Tool[]; editable: boolean }) {
  const bulk = useBulkGroup();
  const [adding, setAdding] = useState('');
  const [msg, setMsg] = useState<string | null>(null);
  const ids = useId();
  const others = all.filter((t) => !members.includes(t));
  const change = (tool: Tool, op: 'add' | 'remove') => {
    setMsg(null);
    bulk.mutate(
      { tools: [tool], group, op },
      { onSuccess: (r) => (r.failed.length ? undefined : setMsg(`${op === 'add' ? 'Added' : 'Removed'} ${tool.id}.`)) },
    );
  };
  const failed = bulk.data?.failed[0]?.error;
  return (
    <section aria-label={`Members of ${group}`}>
      <h3>Members ({members.length})</h3>
      <ul className="plain-list members">
        {members.map((t) => (
          <li key={t.id}>
            <a className="mono" href={href(`/tools/${encodeURIComponent(t.id)}`)}>
              {t.id}
            </a>
            {editable ? (
              <button
                type="button"
                className="link-button danger small"
                aria-label={`Remove ${t.id} from ${group}`}
                disabled={bulk.isPending}
                onClick={() => change(t, 'remove')}
              >
                remove
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {editable ? (
        <div className="row-inline">
          <div className="field grow">
            <label htmlFor={`${ids}-add`}>Add a tool to {group}</label>
            <select id={`${ids}-add`} value={adding} onChange={(e) => setAdding(e.target.value)}>
              <option value="">Choose a tool…</option>
              {others.map((t) => (
                <option key={t.id}>{t.id}</option>
              ))}
            </select>
          </div>
          <button
            type="button"
            disabled={!adding || bulk.isPending}
            onClick={() => {
              const tool = others.find((t) => t.id === adding);
              if (tool) change(tool, 'add');
              setAdding('');
            }}
          >
            Add
          </button>
        </div>
      ) : null}
      <Notice error={bulk.error ?? failed} success={msg} />
    </section>
  );
}

function NewGroup() {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const save = useSaveGroup();
  return (
    <CreateForm
      title="New group"
      submit="Create group"
      busy={save.isPending}
      error={save.error}
      onSubmit={() =>
        save.mutate(
          { group: { name, description, includes: [] }, create: true },
          { onSuccess: (g) => replaceRoute(`/groups?group=${encodeURIComponent(g.name)}`) },
        )
      }
    >
      <TextField label="Name" required format={formats.groupName} value={name} onChange={setName} />
      <TextField label="Description" value={description} onChange={setDescription} />
    </CreateForm>
  );
}
