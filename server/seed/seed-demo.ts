import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConnectionGrant, Group, State, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { runChange } from '../audit/change.ts';
import type { AppDeps } from '../context.ts';
import { validOrThrow } from '../http/body.ts';
import { DEFAULT_GROUP, INITIAL_STATE, groupStore, stateStore, toolStore } from '../store/inventory.ts';
import { insertGrant, insertTenant } from '../store/tenants.ts';
import { checkGroupReferences, checkToolReferences, judgeTenantChange } from '../validation/references.ts';

export type DemoData = {
  tools: Tool[];
  groups: Group[];
  states: State[];
  tenants: { id: string; name: string; policy: TenantPolicy }[];
  grants: (ConnectionGrant & { tenant: string })[];
};

const here = dirname(fileURLToPath(import.meta.url));
export const DEMO_DATA_FILE = join(here, 'demo-data.json');

/**
 * Creates what must always exist (group `default`, state `undefined`) and, when `demo` is true
 * and the database is new (no audit event yet), the demo data, through the same validation as the API. All in one
 * audited transaction: a bad demo file leaves the database untouched.
 */
export async function seedDatabase(deps: Pick<AppDeps, 'database' | 'metrics'>, demo: boolean): Promise<{ seeded: boolean }> {
  const db = deps.database.db;
  // Only a database that has never recorded anything is new: one an admin emptied stays empty.
  const fresh = !(await db.selectFrom('audit_events').select('seq').limit(1).executeTakeFirst());
  const data: DemoData | null = demo && fresh && existsSync(DEMO_DATA_FILE) ? JSON.parse(readFileSync(DEMO_DATA_FILE, 'utf8')) : null;
  // Seeded before the server starts: no cluster events to tell yet.
  return runChange({ ...deps, cluster: null }, { actor: 'system', requestId: null, reason: data ? 'demo data' : 'built-in entities' }, async (ch) => {
    // Asked again under the write lock: replicas started together on a new PostgreSQL database
    // all saw it new, and only the first to get here seeds it.
    const stillFresh = !(await ch.tx.selectFrom('audit_events').select('seq').limit(1).executeTakeFirst());
    const now = new Date().toISOString();
    const fail = (what: string, problems: { pointer: string; message: string }[]) => {
      if (problems.length) throw new Error(`demo data: ${what}: ${problems.map((p) => `${p.pointer} ${p.message}`).join('; ')}`);
    };
    const ensure = async (kind: 'group' | 'state', name: string, description: string) => {
      const store = kind === 'group' ? groupStore : stateStore;
      if (await store.get(ch.tx, name)) return;
      const doc = kind === 'group' ? { name, description, includes: [] } : { name, description };
      await store.insert(ch.tx, name, doc as never, now);
      await ch.record({ action: 'create', entityType: kind, entityId: name, before: null, after: doc });
    };
    await ensure('group', DEFAULT_GROUP, 'Tools every request gets unless it names other groups');
    await ensure('state', INITIAL_STATE, 'The initial workflow state');
    if (!data || !stillFresh) return { seeded: false };

    for (const s of data.states) {
      const doc = validOrThrow<State>('state', structuredClone(s));
      if (doc.name === INITIAL_STATE) continue;
      await stateStore.insert(ch.tx, doc.name, doc, now);
      await ch.record({ action: 'create', entityType: 'state', entityId: doc.name, before: null, after: doc });
    }
    const groups = data.groups.map((g) => validOrThrow<Group>('group', structuredClone(g))).filter((g) => g.name !== DEFAULT_GROUP);
    for (const g of groups) await groupStore.insert(ch.tx, g.name, g, now);
    for (const g of groups) {
      fail(`group ${g.name}`, await checkGroupReferences(ch.tx, g));
      await ch.record({ action: 'create', entityType: 'group', entityId: g.name, before: null, after: g });
    }
    for (const t of data.tools) {
      const tool = validOrThrow<Tool>('tool', structuredClone(t));
      tool.source = { kind: 'core' };
      tool.definitionHash = definitionHash({ name: tool.id, description: tool.description, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema });
      fail(`tool ${tool.id}`, await checkToolReferences(ch.tx, tool));
      await toolStore.insert(ch.tx, tool.id, tool, now);
      await ch.record({ action: 'create', entityType: 'tool', entityId: tool.id, before: null, after: tool });
    }
    for (const t of data.tenants) {
      const policy = validOrThrow<TenantPolicy>('tenant-policy', structuredClone(t.policy));
      fail(`tenant ${t.id}`, (await judgeTenantChange(ch.tx, t.id, { policy })).own);
      await insertTenant(ch.tx, { id: t.id, name: t.name }, policy, now);
      await ch.record({ action: 'create', entityType: 'tenant', entityId: t.id, tenant: t.id, before: null, after: { id: t.id, name: t.name, policy } });
    }
    for (const g of data.grants) {
      const { tenant, ...rest } = structuredClone(g);
      const grant = validOrThrow<ConnectionGrant>('connection-grant', rest);
      fail(`grant ${grant.connectionId}`, (await judgeTenantChange(ch.tx, tenant, { grant })).own);
      await insertGrant(ch.tx, tenant, grant, now);
      await ch.record({ action: 'create', entityType: 'grant', entityId: grant.connectionId, tenant, before: null, after: grant });
    }
    return { seeded: true };
  });
}
