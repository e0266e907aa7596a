import type { Group, State } from '../../policy-schemas/types.gen.ts';
import { DEFAULT_GROUP, INITIAL_STATE, groupStore, stateStore } from '../store/inventory.ts';
import { checkGroupReferences, referrersOf } from '../validation/references.ts';
import { documentRoutes } from './document-routes.ts';

/** `/v1/groups`: `default` always exists; a group still in use cannot be deleted (409 naming every referrer). */
export const groupRoutes = documentRoutes<Group>({
  kind: 'group',
  entityType: 'group',
  resource: 'inventory',
  store: groupStore,
  check: (tx, group) => checkGroupReferences(tx, group),
  checkDelete: async (tx, name) => {
    if (name === DEFAULT_GROUP) return [{ pointer: '/name', message: 'the default group always exists' }];
    return referrersOf(tx, 'group', name);
  },
});

/** `/v1/states`: `undefined` always exists; a state a tool names cannot be deleted (409 naming it). */
export const stateRoutes = documentRoutes<State>({
  kind: 'state',
  entityType: 'state',
  resource: 'inventory',
  store: stateStore,
  check: async () => [],
  checkDelete: async (tx, name) => {
    if (name === INITIAL_STATE) return [{ pointer: '/name', message: 'the undefined state always exists' }];
    return referrersOf(tx, 'state', name);
  },
});
