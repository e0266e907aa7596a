import type { Tool } from '../../policy-schemas/types.gen.ts';

/**
 * The configuration directory, one file per entity:
 *
 *   states/<name>.json              groups/<name>.json
 *   mcp-servers/<id>.json           tools/<id>.json
 *   tenants/<id>/tenant.json        ({ id, name })
 *   tenants/<id>/policy.json        (the tenant policy)
 *   tenants/<id>/tests.json         ({ tests: [...] }, the policy tests)
 *   tenants/<id>/grants/<connectionId>.json
 *
 * Files hold only what an admin writes: no version, timestamps, hashes, review or sync state
 * (server-made), and never a secret (Toolgate stores none). Imported tools keep their `source`.
 */
export type Kind = 'state' | 'group' | 'mcp-server' | 'tool' | 'tenant' | 'policy' | 'tests' | 'grant';

/** The order in which creates and updates run so that every reference resolves; deletions run in reverse. */
export const APPLY_ORDER: readonly Kind[] = ['state', 'group', 'mcp-server', 'tool', 'tenant', 'policy', 'grant', 'tests'];

/** The schema each kind of file is validated against (policy-schemas/). */
export const SCHEMA_OF: Record<Kind, string> = {
  state: 'state',
  group: 'group',
  'mcp-server': 'mcp-server',
  tool: 'tool',
  tenant: 'tenant',
  policy: 'tenant-policy',
  tests: 'policy-tests',
  grant: 'connection-grant',
};

/** The field of a document that names it, where the file name must repeat it. */
export const KEY_FIELD: Partial<Record<Kind, string>> = { state: 'name', group: 'name', 'mcp-server': 'id', tool: 'id', tenant: 'id', grant: 'connectionId' };

/** What the server always has: never deleted by --prune. */
export const BUILT_IN: Partial<Record<Kind, ReadonlySet<string>>> = { state: new Set(['undefined']), group: new Set(['default']) };

/** One entity of the configuration: where its file lives and its document as the file holds it. */
export type Entity = { kind: Kind; path: string; key: string; tenant?: string; doc: Record<string, unknown> };

/** The file of an entity, relative to the configuration directory (always with `/`). */
export function pathOf(kind: Kind, key: string, tenant?: string): string {
  switch (kind) {
    case 'state':
      return `states/${key}.json`;
    case 'group':
      return `groups/${key}.json`;
    case 'mcp-server':
      return `mcp-servers/${key}.json`;
    case 'tool':
      return `tools/${key}.json`;
    case 'tenant':
      return `tenants/${key}/tenant.json`;
    case 'policy':
      return `tenants/${key}/policy.json`;
    case 'tests':
      return `tenants/${key}/tests.json`;
    case 'grant':
      return `tenants/${tenant}/grants/${key}.json`;
  }
}

/** Which entity a relative path holds, or undefined for a path outside the layout. */
export function parsePath(path: string): { kind: Kind; key: string; tenant?: string } | undefined {
  const p = path.split('/');
  const name = (f: string) => (f.endsWith('.json') && f.length > 5 ? f.slice(0, -5) : undefined);
  if (p.length === 2) {
    const key = name(p[1]);
    const kind = ({ states: 'state', groups: 'group', 'mcp-servers': 'mcp-server', tools: 'tool' } as const)[p[0] as 'states'];
    if (kind && key) return { kind, key };
  }
  if (p.length === 3 && p[0] === 'tenants') {
    const kind = ({ 'tenant.json': 'tenant', 'policy.json': 'policy', 'tests.json': 'tests' } as const)[p[2] as 'tenant.json'];
    if (kind) return { kind, key: p[1] };
  }
  if (p.length === 4 && p[0] === 'tenants' && p[2] === 'grants') {
    const key = name(p[3]);
    if (key) return { kind: 'grant', key, tenant: p[1] };
  }
  return undefined;
}

const SERVER_MADE = ['version', 'createdAt', 'updatedAt', 'tenant'];

/**
 * A server entity as its file holds it: without what the server makes (versions, timestamps, the
 * tenant taken from the URL, a tool's definition hash and review, an MCP server's sync state, a
 * core tool's `source`, which says nothing an admin wrote).
 */
export function fileDocument(kind: Kind, entity: Record<string, unknown>): Record<string, unknown> {
  const doc: Record<string, unknown> = { ...entity };
  for (const k of SERVER_MADE) delete doc[k];
  if (kind === 'tool') {
    delete doc.definitionHash;
    delete doc.review;
    if ((doc as { source?: Tool['source'] }).source?.kind !== 'mcp') delete doc.source;
  }
  if (kind === 'mcp-server') delete doc.lastSync;
  if (kind === 'tenant') delete doc.policy;
  return doc;
}

/** The parts of an imported tool that come from its MCP server: apply never changes them. */
export const IMPORTED_DEFINITION = ['description', 'inputSchema', 'outputSchema', 'source'] as const;

/** True for a tool document that came from an MCP server. */
export const isImported = (doc: Record<string, unknown>) => (doc as { source?: Tool['source'] }).source?.kind === 'mcp';

/** Deterministic file bytes: keys sorted at every depth, two-space indent, trailing newline. */
export function fileBytes(doc: unknown): string {
  return `${JSON.stringify(sortKeys(doc), null, 2)}\n`;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v as object).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
  return out;
}
