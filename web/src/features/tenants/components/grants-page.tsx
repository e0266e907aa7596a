import { useState } from 'react';
import type { ConnectionGrant } from '../../../../../policy-schemas/types.gen.ts';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { DraftConflict } from '../../../components/conflict-view.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { ListInput } from '../../../components/list-input.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading } from '../../../components/page.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { may } from '../../../lib/permissions.ts';
import { formats, limits } from '../../../lib/schema.ts';
import { useDraft } from '../../../lib/use-draft.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { useTools } from '../../tools/api/get-tools.ts';
import { useGrants } from '../api/get-grants.ts';
import { useDeleteGrant, useSaveGrant } from '../api/save-grant.ts';
import { GlobList } from './glob-list.tsx';

const blank: ConnectionGrant = { connectionId: '', label: '', subjects: [''], tools: [''] } as unknown as ConnectionGrant;

export function GrantsPage({ tenant, session }: { tenant: string; session: Session }) {
  const grants = useGrants(tenant);
  const tools = useTools();
  const editable = may(session, 'grant', 'write', tenant);
  const [selected, setSelected] = useState<string | null>(null);
  if (grants.isPending) return <Loading what="grants" />;
  if (grants.error) return <Notice error={grants.error} />;
  const toolIds = (tools.data ?? []).map((t) => t.id);
  const current = grants.data.find((g) => g.connectionId === selected);
  return (
    <div className="split">
      <div className="table-wrap">
        <p className="muted">Which opaque connection ids which subjects or roles may use with which tools. Never a credential.</p>
        <DataTable label="Grants" columns={['Connection', 'Subjects', 'Tools', 'Expires']}>
          {grants.data.map((g) => {
            const expired = g.expiresAt && new Date(g.expiresAt).getTime() < Date.now();
            return (
              <tr key={g.connectionId} className={g.connectionId === selected ? 'selected' : undefined}>
                <td>
                  <button type="button" className="link-button mono" onClick={() => setSelected(g.connectionId)}>
                    {g.connectionId}
                  </button>
                  <div className="muted">{g.label}</div>
                </td>
                <td>{g.subjects.join(', ')}</td>
                <td className="mono">{g.tools.join(', ')}</td>
                <td>
                  {g.expiresAt ? (
                    <span className={expired ? 'badge badge-bad' : undefined}>
                      {new Date(g.expiresAt).toLocaleString()}
                      {expired ? ' (expired)' : ''}
                    </span>
                  ) : (
                    'never'
                  )}
                </td>
              </tr>
            );
          })}
        </DataTable>
        {grants.data.length === 0 ? <p className="muted">No grants yet.</p> : null}
      </div>
      <aside className="side-panel">
        {editable ? (
          <button type="button" onClick={() => setSelected(null)} disabled={selected === null}>
            New grant
          </button>
        ) : null}
        <GrantEditor
          key={selected ?? '(new)'}
          tenant={tenant}
          server={current ?? blank}
          create={!current}
          editable={editable}
          toolIds={toolIds}
          onDone={setSelected}
        />
      </aside>
    </div>
  );
}

function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function GrantEditor({
  tenant,
  server,
  create,
  editable,
  toolIds,
  onDone,
}: {
  tenant: string;
  server: ConnectionGrant;
  create: boolean;
  editable: boolean;
  toolIds: string[];
  onDone: (id: string | null) => void;
}) {
  const draft = useDraft<ConnectionGrant>(server);
  const g = draft.value!;
  const save = useSaveGrant();
  const del = useDeleteGrant();
  const [msg, setMsg] = useState<string | null>(null);
  const submit = (body: ConnectionGrant) =>
    save.mutate(
      { tenant, grant: { ...body, subjects: body.subjects.filter(Boolean), tools: body.tools.filter(Boolean) } as ConnectionGrant, create },
      {
        onSuccess: (r) => {
          draft.reset();
          setMsg(`Saved grant ${r.connectionId}.`);
          if (create) onDone(r.connectionId);
        },
        onError: (e) => draft.onSaveError(e),
      },
    );
  return (
    <form
      aria-label={create ? 'New grant' : `Grant ${server.connectionId}`}
      onSubmit={(e) => {
        e.preventDefault();
        setMsg(null);
        submit(g);
      }}
    >
      <h2>{create ? 'New grant' : server.connectionId}</h2>
      <DraftConflict draft={draft} submit={submit} />
      <fieldset className="plain" disabled={!editable}>
        <TextField
          label="Connection id"
          className="mono"
          required
          readOnly={!create}
          format={formats.connectionId}
          value={g.connectionId}
          onChange={(connectionId) => draft.update((v) => ({ ...v, connectionId }))}
        />
        <TextField label="Label" maxLength={limits.grantLabelMax} value={g.label ?? ''} onChange={(label) => draft.update((v) => ({ ...v, label }))} />
        <ListInput
          label="Subjects or roles"
          value={g.subjects.filter(Boolean)}
          onChange={(s) => draft.update((v) => ({ ...v, subjects: (s.length ? s : ['']) as ConnectionGrant['subjects'] }))}
          placeholder="agent:support-bot, analyst"
        />
        <h3 className="label-like">Tools</h3>
        <GlobList
          name="tool pattern"
          value={g.tools.filter(Boolean)}
          onChange={(t) => draft.update((v) => ({ ...v, tools: (t.length ? t : ['']) as ConnectionGrant['tools'] }))}
          toolIds={toolIds}
          disabled={!editable}
        />
        <TextField
          label="Expires at (local time, optional)"
          type="datetime-local"
          value={toLocalInput(g.expiresAt)}
          onChange={(local) =>
            draft.update((v) => {
              const { expiresAt: _old, ...rest } = v;
              return local ? { ...rest, expiresAt: new Date(local).toISOString() } : rest;
            })
          }
        />
        {editable ? (
          <div className="button-row">
            <button type="submit" className="primary" disabled={save.isPending || (!create && !draft.dirty)}>
              {create ? 'Create grant' : 'Save grant'}
            </button>
            {!create ? (
              <ConfirmButton
                question={`Delete grant ${server.connectionId}?`}
                onConfirm={() => del.mutate({ tenant, grant: server }, { onSuccess: () => onDone(null) })}
              >
                Delete
              </ConfirmButton>
            ) : null}
          </div>
        ) : null}
      </fieldset>
      {draft.conflict ? null : <Notice error={save.error ?? del.error} success={msg} />}
    </form>
  );
}
