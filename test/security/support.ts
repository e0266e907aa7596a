import type { McpServer, Tool } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { mcpServerStore, toolStore } from '../../server/store/inventory.ts';
import type { TestApp } from '../support/harness.ts';

/** The inputSchema every imported test tool offers. */
export const OFFERED_SCHEMA = { type: 'object', properties: { q: { type: 'string' } } };

/**
 * Stores an MCP server and a tool exactly as a sync imports it (quarantined, definition pinned),
 * without running a server process: these tests are about what the API does with it next.
 */
export async function importQuarantinedTool(t: TestApp, server: string, name: string, schema: Record<string, unknown> = OFFERED_SCHEMA): Promise<Tool> {
  const now = new Date().toISOString();
  const db = t.deps.database.db;
  if (!(await mcpServerStore.get(db, server))) {
    const doc: McpServer = { id: server, label: server, transport: { kind: 'http', url: `https://${server}.example.com/mcp` } };
    await mcpServerStore.insert(db, server, doc, now);
  }
  const def = { name, description: `Imported ${name}`, inputSchema: schema };
  const hash = definitionHash(def);
  const tool: Tool = {
    id: `mcp__${server}__${name}`,
    description: def.description,
    inputSchema: schema,
    effect: 'external_side_effect',
    groups: ['default'],
    status: 'quarantined',
    source: { kind: 'mcp', server, originalName: name },
    definitionHash: hash,
    review: { current: { ...def, definitionHash: hash }, detectedAt: now },
  };
  await toolStore.insert(db, tool.id, tool, now);
  return tool;
}

/** A request whose body is sent as this exact text (a JS object literal cannot carry an own `__proto__` key). */
export async function rawRequest(t: TestApp, method: string, path: string, text: string, headers: Record<string, string> = {}) {
  return t.request(method, path, { raw: text, headers });
}

/** The current ETag of an entity, read as a client would. */
export async function etag(t: TestApp, path: string): Promise<string> {
  const r = await t.request('GET', path);
  if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${r.text}`);
  return r.headers.get('etag')!;
}
