import type { ApiClient } from './api-client.ts';
import { type Entity, type Kind, KEY_FIELD, fileDocument, pathOf } from './layout.ts';

/** An entity as the server has it now: its file form and the version to send back as If-Match. */
export type ServerEntity = Entity & { version: number };

/** Reads the whole configuration from the server, keyed by file path. */
export async function readServer(api: ApiClient): Promise<Map<string, ServerEntity>> {
  const out = new Map<string, ServerEntity>();
  const add = (kind: Kind, item: Record<string, unknown>, key: string, tenant?: string) => {
    const path = pathOf(kind, key, tenant);
    out.set(path, { kind, path, key, ...(tenant ? { tenant } : {}), doc: fileDocument(kind, item), version: item.version as number });
  };
  const simple: [Kind, string][] = [
    ['state', '/v1/states'],
    ['group', '/v1/groups'],
    ['mcp-server', '/v1/mcp-servers'],
    ['tool', '/v1/tools'],
  ];
  for (const [kind, route] of simple) for (const item of await api.list(route)) add(kind, item, String(item[KEY_FIELD[kind]!]));
  for (const tenant of await api.list('/v1/tenants')) {
    const id = String(tenant.id);
    add('tenant', tenant, id);
    add('policy', await api.get(`/v1/tenants/${api.path(id)}/policy`), id);
    add('tests', await api.get(`/v1/tenants/${api.path(id)}/tests`), id);
    for (const g of await api.list(`/v1/tenants/${api.path(id)}/grants`)) add('grant', g, String(g.connectionId), id);
  }
  return out;
}
