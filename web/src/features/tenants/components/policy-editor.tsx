import { useId, useState, type ReactNode } from 'react';
import type { Role, TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { CheckGroup } from '../../../components/check-group.tsx';
import { DraftConflict } from '../../../components/conflict-view.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { ListInput } from '../../../components/list-input.tsx';
import { Notice } from '../../../components/notice.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { effects, formatProblem, formats, limits, type NameFormat } from '../../../lib/schema.ts';
import type { Draft } from '../../../lib/use-draft.ts';
import { BudgetFields } from '../../../components/budget-fields.tsx';
import { useSavePolicy } from '../api/save-policy.ts';
import { GlobList } from './glob-list.tsx';
import { RoleConstraints } from './role-constraints.tsx';

/** The policy form's id, so that a button elsewhere (the simulator) can submit it. */
export const policyFormId = (tenant: string) => `policy-form-${tenant}`;

/** Roles, bindings, profiles, budgets and TTL of one tenant's draft policy. */
export function PolicyEditor({
  tenant,
  draft,
  toolIds,
  groupNames,
  editable,
}: {
  tenant: string;
  draft: Draft<TenantPolicy>;
  toolIds: string[];
  groupNames: string[];
  editable: boolean;
}) {
  const p = draft.value!;
  const save = useSavePolicy();
  const [reason, setReason] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const ids = useId();
  const set = <K extends keyof TenantPolicy>(key: K, value: TenantPolicy[K]) => draft.update((v) => ({ ...v, [key]: value }));
  const roles = p.roles ?? {};
  const setRole = (name: string, role: Role) => set('roles', { ...roles, [name]: role });

  const submit = (body: TenantPolicy) => {
    setSaved(null);
    save.mutate(
      { tenant, policy: body, reason: reason || undefined },
      {
        onSuccess: (r) => {
          draft.reset();
          setReason('');
          setSaved(`Draft saved (version ${r.version ?? '?'}). Publish to make it live.`);
        },
        onError: (e) => draft.onSaveError(e),
      },
    );
  };
  const errorsAt = (prefix: string) => (save.error instanceof ApiError ? save.error.errors.filter((e) => e.pointer.startsWith(prefix)) : []);
  const errorsIn = (prefix: string) => errorsAt(`${prefix}/`).map((e) => ({ ...e, pointer: e.pointer.slice(prefix.length) }));

  return (
    <form
      id={policyFormId(tenant)}
      className="policy-editor"
      aria-label="Policy"
      onSubmit={(e) => {
        e.preventDefault();
        submit(p);
      }}
    >
      <DraftConflict draft={draft} submit={submit} busy={save.isPending} onDiscard={() => save.reset()} />
      <fieldset className="plain" disabled={!editable}>
        <h2>Roles</h2>
        {Object.entries(roles).map(([name, role]) => (
          <NamedCard
            key={name}
            kind="role"
            name={name}
            editable={editable}
            onRemove={() => {
              const { [name]: _gone, ...rest } = roles;
              set('roles', rest);
            }}
          >
            <CheckGroup
              legend={`Groups of ${name}`}
              options={['*', ...groupNames]}
              value={role.groups ?? []}
              onChange={(groups) => setRole(name, { ...role, groups })}
            />
            <div className="two-col">
              <div>
                <h4>Allow</h4>
                <GlobList
                  name={`allow pattern for ${name}`}
                  value={role.allow ?? []}
                  onChange={(allow) => setRole(name, { ...role, allow })}
                  toolIds={toolIds}
                  disabled={!editable}
                  errors={errorsIn(`/roles/${name}/allow`)}
                />
              </div>
              <div>
                <h4>Deny</h4>
                <GlobList
                  name={`deny pattern for ${name}`}
                  value={role.deny ?? []}
                  onChange={(deny) => setRole(name, { ...role, deny })}
                  toolIds={toolIds}
                  disabled={!editable}
                  errors={errorsIn(`/roles/${name}/deny`)}
                />
              </div>
            </div>
            <CheckGroup
              legend={`Require approval for (${name})`}
              options={effects}
              value={role.requireApproval ?? []}
              onChange={(v) => setRole(name, { ...role, requireApproval: v as Role['requireApproval'] })}
            />
            <RoleConstraints
              role={name}
              value={role.constraints ?? []}
              onChange={(constraints) => setRole(name, { ...role, constraints })}
              editable={editable}
            />
            <FieldErrors errors={errorsAt(`/roles/${name}/`).filter((e) => !/^\/roles\/[^/]+\/(allow|deny)\//.test(e.pointer))} />
          </NamedCard>
        ))}
        {editable ? (
          <AddName
            label="New role name"
            button="Add role"
            format={formats.roleName}
            taken={Object.keys(roles)}
            onAdd={(n) => setRole(n, { groups: [], allow: [], deny: [], requireApproval: [] })}
          />
        ) : null}

        <h2>Bindings</h2>
        <div className="table-wrap">
          <DataTable label="Bindings" columns={['Subject', 'Roles']} actions={editable} compact>
            {Object.entries(p.bindings ?? {}).map(([subject, rs]) => (
              <tr key={subject}>
                <td className="mono">{subject}</td>
                <td>
                  <CheckGroup
                    legend={`Roles of ${subject}`}
                    options={Object.keys(roles)}
                    value={rs}
                    onChange={(v) => set('bindings', { ...p.bindings, [subject]: v })}
                  />
                </td>
                {editable ? (
                  <td>
                    <button
                      type="button"
                      className="link-button danger"
                      onClick={() => {
                        const { [subject]: _gone, ...rest } = p.bindings ?? {};
                        set('bindings', rest);
                      }}
                      aria-label={`Remove binding of ${subject}`}
                    >
                      Remove
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </DataTable>
        </div>
        <FieldErrors errors={errorsAt('/bindings')} />
        {editable ? (
          <AddName
            label="New subject"
            button="Add binding"
            taken={Object.keys(p.bindings ?? {})}
            placeholder="agent:support-bot"
            onAdd={(n) => set('bindings', { ...p.bindings, [n]: [] })}
          />
        ) : null}

        <h2>Provider profiles</h2>
        <p className="hint">
          A request names at most one profile. A tool listed under some profile&apos;s Enabled is shown only to requests naming a profile that enables it; a
          tool under Disabled is hidden from requests naming that profile; tools listed nowhere are shared by every profile. A profile never shows a tool the
          roles do not allow.
        </p>
        {Object.entries(p.profiles ?? {}).map(([name, prof]) => (
          <NamedCard
            key={name}
            kind="profile"
            name={name}
            editable={editable}
            onRemove={() => {
              const { [name]: _gone, ...rest } = p.profiles ?? {};
              set('profiles', rest);
            }}
          >
            <div className="two-col">
              <ListInput
                label={`Enabled in ${name}`}
                value={prof.enable}
                onChange={(enable) => set('profiles', { ...p.profiles, [name]: { ...prof, enable } })}
                hint="Exact tool ids, shown only under profiles that enable them."
              />
              <ListInput
                label={`Disabled in ${name}`}
                value={prof.disable}
                onChange={(disable) => set('profiles', { ...p.profiles, [name]: { ...prof, disable } })}
                hint="Exact tool ids, hidden under this profile."
              />
            </div>
            <FieldErrors errors={errorsAt(`/profiles/${name}`)} />
          </NamedCard>
        ))}
        {editable ? (
          <AddName
            label="New profile name"
            button="Add profile"
            format={formats.profileName}
            taken={Object.keys(p.profiles ?? {})}
            placeholder="openai"
            onAdd={(n) => set('profiles', { ...p.profiles, [n]: { enable: [], disable: [] } })}
          />
        ) : null}

        <div className="two-col">
          <BudgetFields legend="Tenant budgets" value={p.budgets} onChange={(b) => set('budgets', b)} />
          <fieldset className="section">
            <legend>Bundle lifetime</legend>
            <div className="field">
              <label htmlFor={`${ids}-ttl`}>Bundle TTL (seconds)</label>
              <input
                id={`${ids}-ttl`}
                type="number"
                min={limits.bundleTtl.minimum}
                max={limits.bundleTtl.maximum}
                value={p.bundleTtlSeconds ?? ''}
                onChange={(e) => set('bundleTtlSeconds', e.target.value === '' ? undefined : Number(e.target.value))}
              />
              <small className="hint">A runtime refuses a bundle after it expires. Default {limits.bundleTtl.default} s.</small>
            </div>
          </fieldset>
          <fieldset className="section">
            <legend>Change review</legend>
            <label className="check">
              <input
                type="checkbox"
                checked={p.review?.publish === 'required'}
                onChange={(e) => set('review', e.target.checked ? { publish: 'required', approvals: 1 } : undefined)}
              />{' '}
              Publishing needs a second person
            </label>
            <small className="hint">
              Publish then sends the change for review: another admin or editor of this tenant approves it. Only an admin may turn this off.
            </small>
          </fieldset>
        </div>

        {editable ? (
          <div className="save-bar sticky">
            <div className="field grow">
              <label htmlFor={`${ids}-reason`}>Reason for this change</label>
              <input id={`${ids}-reason`} value={reason} onChange={(e) => setReason(e.target.value)} />
            </div>
            <button type="submit" className="primary" disabled={!draft.dirty || save.isPending}>
              {save.isPending ? 'Saving…' : 'Save draft'}
            </button>
            <button
              type="button"
              disabled={!draft.dirty || save.isPending}
              onClick={() => {
                draft.reset();
                save.reset();
                setSaved(null);
              }}
            >
              Discard edits
            </button>
            {draft.dirty ? <span className="muted">Unsaved edits</span> : null}
            {/* The answer appears beside the button that asked for it. */}
            {draft.conflict ? null : <Notice error={save.error} success={saved} />}
          </div>
        ) : null}
      </fieldset>
    </form>
  );
}

function NamedCard({
  kind,
  name,
  editable,
  onRemove,
  children,
}: {
  kind: 'role' | 'profile';
  name: string;
  editable: boolean;
  onRemove: () => void;
  children: ReactNode;
}) {
  const title = kind === 'role' ? 'Role' : 'Profile';
  return (
    <section className="role-card" aria-label={`${title} ${name}`}>
      <header>
        <h3>{name}</h3>
        {editable ? (
          <button type="button" className="link-button danger" onClick={onRemove} aria-label={`Remove ${kind} ${name}`}>
            Remove {kind}
          </button>
        ) : null}
      </header>
      {children}
    </section>
  );
}

function FieldErrors({ errors }: { errors: { pointer: string; message: string }[] }) {
  if (!errors.length) return null;
  return (
    <ul className="field-errors">
      {errors.map((e, i) => (
        <li key={i}>
          <code>{e.pointer}</code> {e.message}
        </li>
      ))}
    </ul>
  );
}

function AddName({
  label,
  button,
  format,
  taken,
  placeholder,
  onAdd,
}: {
  label: string;
  button: string;
  format?: NameFormat;
  taken: string[];
  placeholder?: string;
  onAdd: (name: string) => void;
}) {
  const [name, setName] = useState('');
  const id = useId();
  const n = name.trim();
  const problem = !n ? null : taken.includes(n) ? `${n} already exists` : format ? formatProblem(format, n) : null;
  const add = () => {
    if (!n || problem) return;
    onAdd(n);
    setName('');
  };
  return (
    <div className="row-inline add-name">
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input
          id={id}
          value={name}
          placeholder={placeholder}
          aria-invalid={!!problem}
          aria-describedby={problem ? `${id}-problem` : undefined}
          onChange={(e) => setName(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              add();
            }
          }}
        />
      </div>
      <button type="button" onClick={add} disabled={!n || !!problem}>
        {button}
      </button>
      {problem ? (
        <span id={`${id}-problem`} className="field-error">
          {problem}
        </span>
      ) : null}
    </div>
  );
}
