import type { ReactNode } from 'react';
import { PageHeader } from '../../../components/page.tsx';
import { href } from '../../../lib/router.ts';
import { useTenants } from '../api/get-tenants.ts';

const tabs = [
  { key: '', label: 'Policy and simulator' },
  { key: 'grants', label: 'Grants' },
  { key: 'tests', label: 'Tests' },
  { key: 'publish', label: 'Publish and versions' },
  { key: 'reviews', label: 'Reviews' },
  { key: 'decisions', label: 'Decisions' },
] as const;

export function TenantLayout({ tenant, tab, children }: { tenant: string; tab: string; children: ReactNode }) {
  const tenants = useTenants();
  const t = tenants.data?.find((x) => x.id === tenant);
  return (
    <section className="page">
      <PageHeader
        title={
          <>
            {t?.name ?? tenant} <span className="muted mono small">{tenant}</span>
          </>
        }
        actions={<a href={href('/tenants')}>All tenants</a>}
      />
      <nav aria-label="Tenant sections" className="tabs">
        {tabs.map((x) => (
          <a key={x.key} href={href(`/tenants/${tenant}${x.key ? `/${x.key}` : ''}`)} aria-current={tab === x.key ? 'page' : undefined}>
            {x.label}
          </a>
        ))}
      </nav>
      {children}
    </section>
  );
}
