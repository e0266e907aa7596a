import { useEffect, useId, useRef, useState } from 'react';
import type { Token, TokenCreate } from '../../../../../policy-schemas/types.gen.ts';
import { Badge } from '../../../components/badge.tsx';
import { CheckGroup } from '../../../components/check-group.tsx';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { CreateForm } from '../../../components/create-form.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { SelectField } from '../../../components/select-field.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { tokenRoles } from '../../../lib/schema.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { useTenants } from '../../tenants/api/get-tenants.ts';
import { useTokens } from '../api/get-tokens.ts';
import { useCreateToken, useRevokeToken } from '../api/save-token.ts';
import { may } from '../../../lib/permissions.ts';

const scoped = (role: Token['role']) => role === 'editor' || role === 'viewer' || role === 'runtime';

/** API tokens: who can sign in or pull bundles. Secrets are shown once, at creation. */
export function TokensPage({ session }: { session: Session }) {
  // Typing the address is no way round the menu: only admins see tokens or the form.
  if (!may(session, 'token', 'write'))
    return (
      <section className="page">
        <PageHeader title="Tokens" />
        <p className="notice notice-info">Only admins create, list and revoke tokens. Ask an admin for one.</p>
      </section>
    );
  return <TokenAdmin session={session} />;
}

function TokenAdmin({ session }: { session: Session }) {
  const tokens = useTokens();
  const revoke = useRevokeToken();
  return (
    <section className="page">
      <PageHeader title="Tokens" subtitle="Tokens are stored hashed; a new token's secret is shown once." />
      <div className="split">
        <div className="table-wrap">
          {tokens.isPending ? <Loading what="tokens" /> : null}
          {tokens.error ? <Notice error={tokens.error} /> : null}
          {tokens.data ? (
            <DataTable label="Tokens" columns={['Label', 'Role', 'Tenants', 'Created', 'Last used', 'Expires']} actions>
              {tokens.data.map((t) => (
                <tr key={t.id}>
                  <td>
                    {t.label} <span className="muted mono small">{t.id}</span>
                  </td>
                  <td>
                    <Badge tone="info">{t.role}</Badge>
                  </td>
                  <td>{t.tenants.length ? t.tenants.join(', ') : 'all'}</td>
                  <td>{new Date(t.createdAt).toLocaleString()}</td>
                  <td>{t.lastUsedAt ? new Date(t.lastUsedAt).toLocaleString() : 'never'}</td>
                  <td>{t.expiresAt ? `${Date.parse(t.expiresAt) <= Date.now() ? 'expired ' : ''}${new Date(t.expiresAt).toLocaleString()}` : 'never'}</td>
                  <td>
                    {t.id !== session.tokenId ? (
                      <ConfirmButton
                        question={`Revoke the token "${t.label}"? Whoever uses it loses access at once.`}
                        label={`Revoke ${t.label}`}
                        onConfirm={() => revoke.mutate({ id: t.id, version: t.version })}
                      >
                        Revoke
                      </ConfirmButton>
                    ) : (
                      <span className="muted small">this session</span>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          ) : null}
          <Notice error={revoke.error} success={revoke.isSuccess ? 'Token revoked.' : null} />
        </div>
        <aside className="side-panel">
          <NewToken />
        </aside>
      </div>
    </section>
  );
}

function NewToken() {
  const create = useCreateToken();
  const tenants = useTenants();
  const [label, setLabel] = useState('');
  const [role, setRole] = useState<Token['role']>('editor');
  const [chosen, setChosen] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<Token | null>(null);
  return (
    <CreateForm
      title="New token"
      submit="Create token"
      busy={create.isPending}
      error={create.error}
      onSubmit={() => {
        setCreated(null);
        const body: TokenCreate = scoped(role) ? { label, role, tenants: chosen } : { label, role };
        // A datetime-local value is local time without a zone; the API takes an instant.
        if (expires) body.expiresAt = new Date(expires).toISOString();
        create.mutate(body, {
          onSuccess: (t) => {
            setCreated(t);
            setLabel('');
            setChosen([]);
            setExpires('');
          },
        });
      }}
      after={created?.token ? <NewSecret label={created.label} token={created.token} /> : null}
    >
      <TextField label="Label" required value={label} onChange={setLabel} />
      <SelectField label="Role" value={role} options={tokenRoles} onChange={(v) => setRole(v as Token['role'])} />
      {scoped(role) ? (
        <CheckGroup
          legend={role === 'runtime' ? 'Tenant (exactly one)' : 'Tenants'}
          options={(tenants.data ?? []).map((t) => t.id)}
          value={chosen}
          onChange={setChosen}
        />
      ) : (
        <p className="muted small">{role} tokens reach every tenant.</p>
      )}
      <TextField label="Expires (optional)" type="datetime-local" value={expires} onChange={setExpires} />
    </CreateForm>
  );
}

function NewSecret({ label, token }: { label: string; token: string }) {
  const id = useId();
  // Focus lands on the new secret: the one thing to do next is copy it.
  const secret = useRef<HTMLInputElement>(null);
  useEffect(() => {
    secret.current?.focus();
  }, []);
  return (
    <div role="status" className="notice notice-success">
      <p>
        Created <strong>{label}</strong>. Copy the token now; it is not shown again:
      </p>
      <label htmlFor={id} className="sr-only">
        New token secret
      </label>
      <input ref={secret} id={id} className="mono" readOnly value={token} onFocus={(e) => e.currentTarget.select()} />
      <button type="button" onClick={() => void navigator.clipboard?.writeText(token)}>
        Copy
      </button>
    </div>
  );
}
