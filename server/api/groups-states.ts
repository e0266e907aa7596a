import type { Group, State, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import type { Tx } from '../db/database.ts';
import type { ProblemDetail } from '../errors.ts';
import { DEFAULT_GROUP, INITIAL_STATE, groupStore, stateStore } from '../store/inventory.ts';
import { checkGroupReferences } from '../validation/references.ts';
import { documentRoutes } from './document-routes.ts';

/** `/v1/groups`: `default` always exists; a group still in use cannot be deleted. */
export const groupRoutes = documentRoutes<Group>({
  kind: 'group',
  entityType: 'group',
  resource: 'inventory',
  store: groupStore,
  check: (tx, group) => checkGroupReferences(tx, group),
  checkDelete: async (tx, name) => {
    if (name === DEFAULT_GROUP) return [{ pointer: '/name', message: 'the default group always exists' }];
    const out: ProblemDetail[] = [];
    for (const t of await tools(tx)) if ((t.groups ?? [DEFAULT_GROUP]).includes(name)) out.push({ pointer: `/tools/${t.id}`, message: `tool ${t.id} is in ${name}` });
    for (const g of await groupStore.list(tx)) if (g.includes?.includes(name)) out.push({ pointer: `/groups/${g.name}`, message: `group ${g.name} includes ${name}` });
    for (const p of await tx.selectFrom('tenant_policies').select(['tenant', 'body']).execute()) {
      for (const [role, r] of Object.entries((JSON.parse(p.body) as TenantPolicy).roles ?? {})) {
        if (r.groups?.includes(name)) out.push({ pointer: `/tenants/${p.tenant}/policy/roles/${role}`, message: `role ${role} of tenant ${p.tenant} permits ${name}` });
      }
    }
    return out;
  },
});

/** `/v1/states`: `undefined` always exists; a state a tool names cannot be deleted. */
export const stateRoutes = documentRoutes<State>({
  kind: 'state',
  entityType: 'state',
  resource: 'inventory',
  store: stateStore,
  check: async () => [],
  checkDelete: async (tx, name) => {
    if (name === INITIAL_STATE) return [{ pointer: '/name', message: 'the undefined state always exists' }];
    const out: ProblemDetail[] = [];
    for (const t of await tools(tx)) {
      if (t.state === name || t.availableInStates?.includes(name)) out.push({ pointer: `/tools/${t.id}`, message: `tool ${t.id} names state ${name}` });
    }
    return out;
  },
});

async function tools(tx: Tx): Promise<Tool[]> {
  return (await tx.selectFrom('tools').select('body').execute()).map((r) => JSON.parse(r.body) as Tool);
}
