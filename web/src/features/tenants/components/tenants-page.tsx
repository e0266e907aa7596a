import { useId, useState } from 'react';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
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
  const ids = useId();
  return (
    <form
      aria-label="New tenant"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate({ id, name }, { onSuccess: (t) => navigate(`/tenants/${t.id}`) });
      }}
    >
      <h2>New tenant</h2>
      <div className="field">
        <label htmlFor={`${ids}-id`}>Tenant id</label>
        <input id={`${ids}-id`} required pattern={patterns.tenantId} value={id} onChange={(e) => setId(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={`${ids}-name`}>Name</label>
        <input id={`${ids}-name`} required maxLength={limits.tenantNameMax} value={name} onChange={(e) => setName(e.target.value)} />
      </div>
      <button type="submit" className="primary" disabled={save.isPending}>
        Create tenant
      </button>
      <Notice error={save.error} />
    </form>
  );
}
