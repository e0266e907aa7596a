import { useState } from 'react';
import { CreateForm } from '../../../components/create-form.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { canEditInventory, visibleTenants } from '../../../lib/permissions.ts';
import { href, navigate } from '../../../lib/router.ts';
import { limits, patterns } from '../../../lib/schema.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { useTenants } from '../api/get-tenants.ts';
import { useCreateTenant } from '../api/save-tenant.ts';

export function TenantsPage({ session }: { session: Session }) {
  const tenants = useTenants();
  const visible = visibleTenants(session);
  if (tenants.isPending) return <Loading what="tenants" />;
  if (tenants.error) return <Notice error={tenants.error} />;
  const items = tenants.data.filter((t) => !visible || visible.includes(t.id));
  return (
    <section className="page">
      <PageHeader title="Tenants" subtitle="Each tenant has one policy, its grants and its signed bundles." />
      <div className="split">
        <div className="table-wrap">
          <DataTable label="Tenants" columns={['Tenant', 'Roles', 'Subjects', 'Open']}>
            {items.map((t) => (
              <tr key={t.id}>
                <td>
                  <a href={href(`/tenants/${t.id}`)}>{t.name}</a> <span className="muted mono">{t.id}</span>
                </td>
                <td>{Object.keys(t.policy?.roles ?? {}).join(', ') || '—'}</td>
                <td>{Object.keys(t.policy?.bindings ?? {}).length || '—'}</td>
                <td className="actions">
                  <a href={href(`/tenants/${t.id}`)}>Policy</a> · <a href={href(`/tenants/${t.id}/grants`)}>Grants</a> ·{' '}
                  <a href={href(`/tenants/${t.id}/publish`)}>Publish</a>
                </td>
              </tr>
            ))}
          </DataTable>
        </div>
        {canEditInventory(session) ? (
          <aside className="side-panel">
            <NewTenant />
          </aside>
        ) : null}
      </div>
    </section>
  );
}

function NewTenant() {
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const save = useCreateTenant();
  return (
    <CreateForm
      title="New tenant"
      submit="Create tenant"
      busy={save.isPending}
      error={save.error}
      onSubmit={() => save.mutate({ id, name }, { onSuccess: (t) => navigate(`/tenants/${t.id}`) })}
    >
      <TextField label="Tenant id" required pattern={patterns.tenantId} value={id} onChange={setId} />
      <TextField label="Name" required maxLength={limits.tenantNameMax} value={name} onChange={setName} />
    </CreateForm>
  );
}
