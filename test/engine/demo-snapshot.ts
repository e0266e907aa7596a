import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConnectionGrant, Group, State, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';

const here = dirname(fileURLToPath(import.meta.url));

type DemoData = {
  tools: Tool[];
  groups: Group[];
  states: State[];
  tenants: { id: string; name: string; policy: TenantPolicy }[];
  grants: (ConnectionGrant & { tenant: string })[];
};

/** The seeded demo data, as parsed from server/seed/demo-data.json. */
export function demoData(): DemoData {
  return JSON.parse(readFileSync(join(here, '../../server/seed/demo-data.json'), 'utf8')) as DemoData;
}

/** A compile snapshot of one demo tenant, as loadDraftSnapshot would read it after seeding. */
export function demoSnapshot(tenantId: string): Snapshot {
  const d = demoData();
  const tenant = d.tenants.find((t) => t.id === tenantId);
  if (!tenant) throw new Error(`no demo tenant ${tenantId}`);
  return {
    tenant: { id: tenant.id, name: tenant.name },
    policy: tenant.policy,
    tools: d.tools,
    groups: d.groups,
    states: d.states,
    grants: d.grants.filter((g) => g.tenant === tenantId).map(({ tenant: _t, ...g }) => g),
  };
}
