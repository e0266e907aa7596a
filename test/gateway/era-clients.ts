import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// Clients of a gateway's HTTP listener in each MCP era: the official 1.x SDK client (2025-11-25,
// sessions), the 2.x one pinned to 2026-07-28 (stateless), and raw 2026-07-28 POSTs for what the
// SDKs do not let a test send.

export const MODERN_VERSION = '2026-07-28';

/** The 2.x SDK client, pinned to 2026-07-28: no initialize, no session, every request carries its _meta. */
export async function modernClient(url: string, key?: string): Promise<ModernClient> {
  const client = new ModernClient({ name: 'modern-client', version: '1' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
  await client.connect(new ModernTransport(new URL(url), key === undefined ? undefined : { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

/** The 1.x SDK client: initialize, then a 2025-11-25 session. */
export async function legacyClient(url: string, key: string): Promise<LegacyClient> {
  const client = new LegacyClient({ name: 'legacy-client', version: '1' });
  await client.connect(new LegacyTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

/** The _meta every 2026-07-28 request carries, with `extra` (a state handle, a log level) beside it. */
export function modernMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {}, ...extra };
}

/** The headers of a raw 2026-07-28 request for `method` (and, for tools/call, the tool `name`) by the client with `key`. */
export function modernHeaders(key: string, method: string, name?: string): Record<string, string> {
  return {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  };
}

/**
 * A raw 2026-07-28 POST of the JSON-RPC request `body` (id 1 unless it says): the headers mirrored
 * from the body (method, tool name) unless `headers` overrides them; an undefined header is left out.
 */
export function postModern(url: string, key: string, body: Record<string, unknown>, headers: Record<string, string | undefined> = {}): Promise<Response> {
  const params = (body.params ?? {}) as Record<string, unknown>;
  const h = modernHeaders(key, String(body.method), typeof params.name === 'string' ? params.name : undefined);
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) delete h[k];
    else h[k] = v;
  }
  return fetch(url, { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }) });
}

/** The 2025-era revision a raw session is opened in unless a test names another. */
export const SESSION_VERSION = '2025-11-25';

/** The JSON-RPC initialize request that opens a session in `protocolVersion`, declaring `capabilities`. */
export function initializeRequest(protocolVersion = SESSION_VERSION, capabilities: Record<string, unknown> = {}, id = 0): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities, clientInfo: { name: 'raw', version: '1' } } };
}

/** A raw initialize POST (the start of a session) by the client with `key` (null: no Authorization), `headers` beside. */
export function postInitialize(url: string, key: string | null, headers: Record<string, string> = {}, protocolVersion = SESSION_VERSION): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(initializeRequest(protocolVersion)),
  });
}
