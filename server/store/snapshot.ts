import type { ConnectionGrant, Group, State, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import type { DbOrTx } from '../db/database.ts';
import { stripStored } from './document-store.ts';
import { cachedToolDocuments, groupStore, stateStore } from './inventory.ts';
import { getPolicy, getTenant, listGrants, tenantDocument } from './tenants.ts';

/** Everything the compiler needs for one tenant, without versions or timestamps. */
export type DraftSnapshot = {
  tenant: { id: string; name: string };
  policy: TenantPolicy;
  tools: Tool[];
  groups: Group[];
  states: State[];
  grants: ConnectionGrant[];
};

/**
 * The current (unpublished) draft of a tenant, read consistently; undefined when the tenant is
 * unknown. `tools` is the inventory's cached, frozen array (cachedToolDocuments): read-only.
 */
export async function loadDraftSnapshot(db: DbOrTx, tenantId: string): Promise<DraftSnapshot | undefined> {
  const tenant = await getTenant(db, tenantId);
  if (!tenant) return undefined;
  const policy = await getPolicy(db, tenantId);
  return {
    tenant: { id: tenant.id, name: tenant.name },
    policy: tenantDocument<TenantPolicy>(policy!),
    // The inventory's frozen array, shared by reads while the table is unchanged (copy it to edit).
    tools: (await cachedToolDocuments(db)) as Tool[],
    groups: (await groupStore.list(db)).map(stripStored),
    states: (await stateStore.list(db)).map(stripStored),
    grants: (await listGrants(db, tenantId)).map((g) => tenantDocument<ConnectionGrant>(g)),
  };
}
