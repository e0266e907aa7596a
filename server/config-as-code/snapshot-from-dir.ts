import type { ConnectionGrant, Group, PolicyTest, State, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import type { DraftSnapshot } from '../store/snapshot.ts';
import { emptyPolicy } from '../store/tenants.ts';
import type { Entity } from './layout.ts';

/**
 * One tenant's draft as a configuration directory describes it, in the form the compiler takes
 * from the database, with the tenant's policy tests: what `toolgate test --dir` compiles and
 * tests without a server. Undefined when the directory has no such tenant.
 */
export function snapshotFromDir(entities: Map<string, Entity>, tenant: string): { snapshot: DraftSnapshot; tests: PolicyTest[] } | undefined {
  const t = entities.get(`tenants/${tenant}/tenant.json`);
  if (!t) return undefined;
  const of = <T>(kind: Entity['kind'], filter: (e: Entity) => boolean = () => true) =>
    [...entities.values()]
      .filter((e) => e.kind === kind && filter(e))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((e) => e.doc as unknown as T);
  const snapshot: DraftSnapshot = {
    tenant: { id: tenant, name: String(t.doc.name) },
    policy: (entities.get(`tenants/${tenant}/policy.json`)?.doc as unknown as TenantPolicy | undefined) ?? emptyPolicy(),
    tools: of<Tool>('tool'),
    groups: of<Group>('group'),
    states: of<State>('state'),
    grants: of<ConnectionGrant>('grant', (e) => e.tenant === tenant),
  };
  const tests = (entities.get(`tenants/${tenant}/tests.json`)?.doc.tests as PolicyTest[] | undefined) ?? [];
  return { snapshot, tests };
}
