import { useState } from 'react';
import { CreateForm } from '../../../components/create-form.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { canEditInventory, visibleTenants } from '../../../lib/permissions.ts';
import { href, navigate } from '../../../lib/router.ts';
import { formats, limits } from '../../../lib/schema.ts';
import type { Session } from '../../auth/api/get-session.ts';
import { Badge } from '../../../components/badge.tsx';
import { flash } from '../../../lib/flash.ts';
import { useOverview } from '../../overview/api/get-overview.ts';
import { useCreateTenant } from '../api/save-tenant.ts';
import type { TenantOverview } from '../../../../../policy-schemas/types.gen.ts';

/** Every tenant at a glance: roles, subjects, what is published, whether the draft differs, the fleet. */
export function TenantsPage({ session }: { session: Session }) {
  const overview = useOverview();
  const visible = visibleTenants(session);
  if (overview.isPending) return <Loading what="tenants" />;
  if (overview.error) return <Notice error={overview.error} />;
  const items = overview.data.tenants.filter((t) => !visible || visible.includes(t.id));
  return (
    <section className="page">
      <PageHeader title="Tenants" subtitle="Each tenant has one policy, its grants and its signed bundles." />
      <div className="split">
        <div className="table-wrap">
          <DataTable label="Tenants" columns={['Tenant', 'Roles', 'Subjects', 'Published', 'Draft', 'Runtimes', 'Open']}>
            {items.map((t) => (
              <tr key={t.id}>
                <td>
                  <a href={href(`/tenants/${t.id}`)}>{t.name}</a> <span className="muted mono">{t.id}</span>
                </td>
                <td>{t.roles.join(', ') || '—'}</td>
                <td title={t.subjects.join('\n')}>
                  {t.subjects.length ? `${t.subjects.length}: ${t.subjects.slice(0, 3).join(', ')}${t.subjects.length > 3 ? ', …' : ''}` : '—'}
                </td>
                <td>{t.published ? `v${t.published.version}` : 'never'}</td>
                <td>
                  <DraftState t={t} />
                </td>
                <td>
                  <Fleet t={t} />
                </td>
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

function DraftState({ t }: { t: TenantOverview }) {
  if (t.draft.compileError) return <Badge tone="bad">does not compile</Badge>;
  if (!t.draft.differs) return <span className="muted">same as published</span>;
  return (
    <a href={href(`/tenants/${t.id}/publish`)}>
      <Badge tone="warn">unpublished</Badge> {t.published ? t.draft.changes.join(', ') : 'first publish'}
    </a>
  );
}

function Fleet({ t }: { t: TenantOverview }) {
  const f = t.fleet;
  if (!f.total) return <span className="muted">none reported</span>;
  return (
    <span>
      {f.onLatest} of {f.total} on latest
      {f.behind ? <Badge tone="warn">{f.behind} behind</Badge> : null}
      {f.unhealthy ? <Badge tone="bad">{f.unhealthy} unhealthy</Badge> : null}
    </span>
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
      onSubmit={() =>
        save.mutate(
          { id, name },
          {
            onSuccess: (t) => {
              flash(`Created tenant ${t.name}. Add a role and bind a subject to it, then simulate.`, `/tenants/${t.id}`);
              navigate(`/tenants/${t.id}`);
            },
          },
        )
      }
    >
      <TextField label="Tenant id" required format={formats.tenantId} value={id} onChange={setId} />
      <TextField label="Name" required maxLength={limits.tenantNameMax} value={name} onChange={setName} />
    </CreateForm>
  );
}
