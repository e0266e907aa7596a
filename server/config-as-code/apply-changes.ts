import type { ApiClient } from './api-client.ts';
import type { Change } from './plan.ts';

const ROUTE = { state: '/v1/states', group: '/v1/groups', 'mcp-server': '/v1/mcp-servers', tool: '/v1/tools' } as const;

/** The API route of an entity (or of its collection, for a create). */
function routeOf(api: ApiClient, c: Exclude<Change, { op: 'note' }>, collection: boolean): string {
  switch (c.kind) {
    case 'state':
    case 'group':
    case 'mcp-server':
    case 'tool':
      return collection ? ROUTE[c.kind] : `${ROUTE[c.kind]}/${api.path(c.key)}`;
    case 'tenant':
      return collection ? '/v1/tenants' : `/v1/tenants/${api.path(c.key)}`;
    case 'policy':
      return `/v1/tenants/${api.path(c.key)}/policy`;
    case 'tests':
      return `/v1/tenants/${api.path(c.key)}/tests`;
    case 'grant':
      return `/v1/tenants/${api.path(c.tenant!)}/grants${collection ? '' : `/${api.path(c.key)}`}`;
  }
}

/**
 * Sends a plan's changes in order, each with If-Match where it changes what was read. Stops at
 * the first refusal; `done` lists what was applied before it (those changes stay applied: each is
 * its own audited change on the server).
 */
export async function applyChanges(
  api: ApiClient,
  changes: Change[],
  onApplied: (c: Change) => void,
): Promise<{ done: Change[]; failed?: { change: Change; error: Error } }> {
  const done: Change[] = [];
  const policyOf = new Map(changes.filter((c) => c.op === 'create' && c.kind === 'policy' && c.withTenant).map((c) => [c.path, c]));
  for (const c of changes) {
    if (c.op === 'note') continue;
    try {
      if (c.op === 'create') {
        if (c.kind === 'policy' && c.withTenant) {
          // Sent with the tenant's POST, which came just before.
        } else if (c.kind === 'tenant') {
          const policy = policyOf.get(`tenants/${c.key}/policy.json`);
          await api.post(routeOf(api, c, true), { ...c.doc, ...(policy?.op === 'create' ? { policy: policy.doc } : {}) });
        } else if (c.kind === 'policy' || c.kind === 'tests') {
          await api.put(routeOf(api, c, false), c.doc, c.version ?? 1);
        } else {
          await api.post(routeOf(api, c, true), c.doc);
        }
      } else if (c.op === 'update') {
        await api.put(routeOf(api, c, false), c.doc, c.version);
      } else {
        await api.delete(routeOf(api, c, false), c.version);
      }
    } catch (error) {
      return { done, failed: { change: c, error: error as Error } };
    }
    done.push(c);
    onApplied(c);
  }
  return { done };
}
