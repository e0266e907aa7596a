import { useId, useState } from 'react';
import type { SsoAccess, SsoMapping } from '../../../../../policy-schemas/types.gen.ts';
import { Badge } from '../../../components/badge.tsx';
import { CheckGroup } from '../../../components/check-group.tsx';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { CreateForm } from '../../../components/create-form.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { SelectField } from '../../../components/select-field.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { formats, ssoRoles } from '../../../lib/schema.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { useTenants } from '../../tenants/api/get-tenants.ts';
import { type StoredMapping, useCreateMapping, useDeleteMapping, useMappings, usePreview, useSsoEnabled, useUpdateMapping } from '../api/sso-mappings.ts';
import { may } from '../../../lib/permissions.ts';

const scoped = (role: SsoMapping['role']) => role === 'editor' || role === 'viewer';

/** Single sign-on: which identity-provider claims give which console role, and a checker for pasted claims. */
export function SsoPage({ session }: { session: Session }) {
  const mappings = useMappings();
  const ssoEnabled = useSsoEnabled();
  const remove = useDeleteMapping();
  const admin = may(session, 'sso', 'write');
  const [editing, setEditing] = useState<StoredMapping | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <section className="page">
      <PageHeader
        title="Single sign-on"
        subtitle="People who sign in through your identity provider get the role of every mapping their ID-token claims match: the union of the tenants, the strongest role in each. No match, no access."
      />
      {ssoEnabled.data === false ? (
        <p role="note" className="notice notice-warn">
          Single sign-on is off on this server: the sign-in page offers no “Sign in with SSO” and these mappings are not used until the operator sets{' '}
          <code>TOOLGATE_OIDC_ISSUER</code>, <code>TOOLGATE_OIDC_CLIENT_ID</code>, <code>TOOLGATE_OIDC_CLIENT_SECRET</code> and <code>TOOLGATE_PUBLIC_URL</code>{' '}
          and restarts it. You can still prepare mappings and check claims against them.
        </p>
      ) : null}
      {ssoEnabled.data === true ? (
        <p role="note" className="notice notice-info">
          Single sign-on is on: the sign-in page offers “Sign in with SSO”.
        </p>
      ) : null}
      <div className="split">
        <div className="table-wrap">
          {mappings.isPending ? <Loading what="mappings" /> : null}
          {mappings.error ? <Notice error={mappings.error} /> : null}
          {mappings.data && mappings.data.length === 0 ? (
            <p className="empty">No mappings yet: nobody can sign in through single sign-on until one matches them.</p>
          ) : null}
          {mappings.data && mappings.data.length > 0 ? (
            <DataTable label="Mappings" columns={['Mapping', 'When claim', 'Has value', 'Role', 'Tenants']} actions={admin}>
              {mappings.data.map((m) => (
                <tr key={m.id}>
                  <td className="mono">{m.id}</td>
                  <td className="mono">{m.claim}</td>
                  <td className="mono">{m.value}</td>
                  <td>
                    <Badge tone="info">{m.role}</Badge>
                  </td>
                  <td>{m.tenants?.join(', ') ?? 'all'}</td>
                  {admin ? (
                    <td>
                      <button
                        type="button"
                        aria-label={`Edit ${m.id}`}
                        onClick={() => {
                          setSaved(null);
                          setEditing(m);
                        }}
                      >
                        Edit
                      </button>{' '}
                      <ConfirmButton
                        question={`Remove the mapping "${m.id}"? People who have access only through it are signed out within a minute.`}
                        label={`Remove ${m.id}`}
                        onConfirm={() => remove.mutate(m)}
                      >
                        Remove
                      </ConfirmButton>
                    </td>
                  ) : null}
                </tr>
              ))}
            </DataTable>
          ) : null}
          <Notice error={remove.error} success={remove.isSuccess ? 'Mapping removed.' : null} />
          <Notice success={saved} />
          <ClaimsCheck />
        </div>
        {admin ? (
          <aside className="side-panel">
            <MappingForm
              key={editing ? `${editing.id}@${editing.version}` : 'new'}
              editing={editing}
              onDone={(done) => {
                setEditing(null);
                setSaved(done);
              }}
            />
          </aside>
        ) : null}
      </div>
    </section>
  );
}

/** Adds a mapping, or, with `editing`, changes that one in place (its id stays: it names it in the audit trail). */
function MappingForm({ editing, onDone }: { editing: StoredMapping | null; onDone: (saved: string | null) => void }) {
  const create = useCreateMapping();
  const update = useUpdateMapping();
  const tenants = useTenants();
  const [id, setId] = useState(editing?.id ?? '');
  const [claim, setClaim] = useState(editing?.claim ?? 'groups');
  const [value, setValue] = useState(editing?.value ?? '');
  const [role, setRole] = useState<SsoMapping['role']>(editing?.role ?? 'editor');
  const [chosen, setChosen] = useState<string[]>(editing?.tenants ?? []);
  const mutation = editing ? update : create;
  return (
    <CreateForm
      title={editing ? `Edit mapping ${editing.id}` : 'New mapping'}
      submit={editing ? 'Save mapping' : 'Add mapping'}
      busy={mutation.isPending}
      error={mutation.error}
      onSubmit={() => {
        const fields = { id, claim, value, role, ...(editing?.description === undefined ? {} : { description: editing.description }) };
        const body = (scoped(role) ? { ...fields, tenants: chosen } : fields) as SsoMapping;
        if (editing) {
          update.mutate({ mapping: body, version: editing.version }, { onSuccess: (m) => onDone(`Saved mapping ${m.id}.`) });
          return;
        }
        create.mutate(body, {
          onSuccess: () => {
            setId('');
            setValue('');
            setChosen([]);
          },
        });
      }}
      after={
        editing ? (
          <button type="button" onClick={() => onDone(null)}>
            Cancel editing
          </button>
        ) : null
      }
    >
      <TextField label="Mapping id" required value={id} onChange={setId} readOnly={!!editing} placeholder="acme-developers" format={formats.ssoMappingId} />
      <TextField label="Claim" required value={claim} onChange={setClaim} />
      <TextField label="Value" required value={value} onChange={setValue} placeholder="acme-developers" />
      <SelectField label="Role" value={role} options={ssoRoles} onChange={(v) => setRole(v as SsoMapping['role'])} />
      {scoped(role) ? (
        <CheckGroup legend="Tenants" options={(tenants.data ?? []).map((t) => t.id)} value={chosen} onChange={setChosen} />
      ) : (
        <p className="muted small">{role} reaches every tenant.</p>
      )}
    </CreateForm>
  );
}

function ClaimsCheck() {
  const id = useId();
  const preview = usePreview();
  const [text, setText] = useState('{\n  "sub": "…",\n  "email": "ada@example.com",\n  "groups": ["acme-developers"]\n}');
  const [parseError, setParseError] = useState<string | null>(null);
  return (
    <form
      className="card"
      aria-labelledby={`${id}-title`}
      onSubmit={(e) => {
        e.preventDefault();
        let claims: unknown;
        try {
          claims = JSON.parse(text);
        } catch (err) {
          setParseError(`Not JSON: ${(err as Error).message}`);
          return;
        }
        if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) {
          setParseError('Paste the claims as one JSON object, as in a decoded ID token.');
          return;
        }
        setParseError(null);
        preview.mutate(claims as Record<string, unknown>);
      }}
    >
      <h2 id={`${id}-title`}>Check a person's claims</h2>
      <div className="field">
        <label htmlFor={`${id}-claims`}>ID-token claims (JSON)</label>
        <textarea id={`${id}-claims`} className="mono" rows={7} value={text} onChange={(e) => setText(e.target.value)} />
      </div>
      <button type="submit" disabled={preview.isPending}>
        Show access
      </button>
      {parseError ? (
        <p role="alert" className="notice notice-error">
          {parseError}
        </p>
      ) : null}
      <Notice error={preview.error} />
      {preview.data ? <AccessSummary access={preview.data} /> : null}
    </form>
  );
}

function AccessSummary({ access }: { access: SsoAccess }) {
  if (!access.access)
    return (
      <p role="status" className="notice notice-error">
        No access: no mapping matches these claims, so this person would be refused.
      </p>
    );
  const perTenant = Object.entries(access.tenantRoles);
  return (
    <div role="status" className="notice notice-success">
      <p>
        Role <strong>{access.role}</strong>
        {access.tenants === null ? ' in every tenant' : ` in ${access.tenants.join(', ')}`}, through {access.mappings.join(', ')}.
      </p>
      {perTenant.length ? (
        <ul>
          {perTenant.map(([t, r]) => (
            <li key={t}>
              {t}: {r}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
