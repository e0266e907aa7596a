import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { noteCallArguments } from './call-arguments-text.ts';
import { ClientKeys, FailureLimiter, hasCredential, keyMatches } from './client-keys.ts';
import type { ResolvedClient, ResolvedConfig } from './config.ts';
import type { Gateway, GatewaySession } from './gateway.ts';
import { HttpSessionTransport } from './http-session-transport.ts';
import type { GatewayMetrics } from './metrics.ts';
import { type ModernContext, handleModernRequest, isModernRequest } from './modern-http.ts';
import type { OAuthResourceServer, TokenAuthentication } from './oauth-resource-server.ts';
import { StateHandles } from './state-handles.ts';

type HttpListen = Extract<ResolvedConfig['listen'], { kind: 'http' }>;

export type HttpListenerOptions = {
  listen: HttpListen;
  clients: readonly ResolvedClient[];
  metricsKeyDigest: Buffer | null;
  gateway: Gateway;
  metrics: GatewayMetrics;
  health: () => unknown;
  /** Failed authentications allowed per address and window before 429 (default 10 per 60 s). */
  limiter?: FailureLimiter;
  /** The same for the metrics key, kept apart: a scraper with a stale key must not lock MCP clients out (default 10 per 60 s). */
  metricsLimiter?: FailureLimiter;
  /** Sessions without a request for this long are closed (default 1 hour). */
  idleMs?: number;
  maxSessions?: number;
  /**
   * Most sessions one client holds (default 100). One more closes its least recently used session
   * that has no request in flight (a client that dropped sessions without DELETE keeps working);
   * when all are busy, the new one is refused with 429.
   */
  sessionsPerClient?: number;
  /** Signs and reads 2026-07-28 workflow state handles (default: a key of this listener's own, for one tenant named ''). */
  stateHandles?: StateHandles;
  /** The gateway's version, as server/discover names it. */
  version?: string;
  /** Takes OAuth access tokens besides static keys, and serves the protected resource metadata (auth.oauth). */
  oauth?: OAuthResourceServer | null;
};

export type HttpListener = { url: string; port: number; close(): Promise<void> };

type Entry = { session: GatewaySession; transport: HttpSessionTransport; client: ResolvedClient; lastSeen: number };

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Serves MCP over streamable HTTP at the configured path, one gateway session per MCP session,
 * plus `/healthz` and `/metrics`. Every MCP request needs a known client key and an allowed Origin.
 */
export async function startHttpListener(o: HttpListenerOptions): Promise<HttpListener> {
  const keys = new ClientKeys(o.clients);
  const limiter = o.limiter ?? new FailureLimiter();
  const metricsLimiter = o.metricsLimiter ?? new FailureLimiter();
  const entries = new Map<string, Entry>();
  const idleMs = o.idleMs ?? 3_600_000;
  const maxSessions = o.maxSessions ?? 10_000;
  const sessionsPerClient = o.sessionsPerClient ?? 100;
  /** Each client's open sessions. */
  const byClient = new Map<ResolvedClient, Set<Entry>>();
  let ownOrigins = new Set<string>();
  const modern: ModernContext = {
    gateway: o.gateway,
    handles: o.stateHandles ?? new StateHandles(randomBytes(32), ''),
    version: o.version ?? '1',
    instructions: 'Tools are filtered and enforced by Toolgate policy.',
    listensPerClient: o.sessionsPerClient ?? 100,
    listening: new Map(),
  };

  const server: HttpServer = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.end();
    });
  });
  // Long-lived SSE streams carry list_changed notifications; Node's request timeout must not cut them.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 65_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz' && req.method === 'GET') return sendJson(res, 200, o.health(), { 'cache-control': 'no-store' });
    if (path === '/metrics' && req.method === 'GET') return metrics(req, res);
    if (o.oauth && req.method === 'GET' && o.oauth.servesMetadataAt(path)) return o.oauth.answerMetadata(res);
    if (path !== o.listen.path) return sendJson(res, 404, { error: 'not found' });

    const origin = req.headers.origin;
    if (origin !== undefined && !ownOrigins.has(origin) && !o.listen.allowedOrigins.includes(origin)) {
      return sendRpcError(res, 403, -32000, 'Forbidden: this Origin may not use the gateway', { connection: 'close' });
    }
    const address = req.socket.remoteAddress ?? 'unknown';
    const wait = retryAfter(limiter, address);
    if (wait) return sendRpcError(res, 429, -32000, 'Too many failed authentications; try again later', { ...wait, connection: 'close' });
    let who: TokenAuthentication = keys.identify(req.socket, req.headers.authorization);
    // Not a known key: perhaps an access token from a configured issuer.
    if (who.kind === 'refused' && o.oauth) who = await o.oauth.identify(req.socket, req.headers.authorization);
    if (who.kind === 'unavailable') {
      return sendRpcError(res, 503, -32000, "The access token's issuer cannot be reached to check it; try again later", {
        'retry-after': '30',
        connection: 'close',
      });
    }
    if (who.kind !== 'client') {
      // No credential at all is not a guess at a key: it is answered, not held against the address.
      if (who.kind === 'refused') failed(limiter, address);
      else o.metrics.unauthorized.inc({ status: '401' });
      const wanted = o.oauth ? 'a known client key or an access token for this resource' : 'a known client key';
      return sendRpcError(res, 401, -32000, `Unauthorized: ${wanted} is required (Authorization: Bearer <key>)`, {
        'www-authenticate': o.oauth ? o.oauth.challenge(who.kind === 'refused') : 'Bearer realm="toolgate-gateway"',
        connection: 'close',
      });
    }

    const client = who.client;
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readBody(req);
      if (read === 'too_large') return sendRpcError(res, 413, -32600, 'Request body too large', { connection: 'close' });
      const text = read.toString('utf8');
      try {
        body = JSON.parse(text);
      } catch {
        return sendRpcError(res, 400, -32700, 'Parse error: the body is not JSON');
      }
      // A tools/call's arguments are judged on their text (I-JSON), which the parsed body no longer shows.
      noteCallArguments(text, body);
    }

    // MCP 2026-07-28: each request stands alone; the session revision below is chosen per request too.
    if (isModernRequest(req, body)) return handleModernRequest(modern, client, req, res, body);

    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const entry = entries.get(sid);
      // A session belongs to the key that opened it; another key cannot even learn it exists.
      if (!entry || entry.client !== client) return sendRpcError(res, 404, -32001, 'Session not found');
      entry.lastSeen = Date.now();
      return entry.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitialize(body)) {
      return sendRpcError(res, 400, -32000, 'Bad Request: no valid session ID; send initialize first');
    }
    if (!makeRoomFor(client)) {
      return sendRpcError(res, 429, -32000, `Too many open sessions: this client holds ${sessionsPerClient}, all busy; close one (DELETE) or retry later`, {
        'retry-after': '5',
      });
    }
    if (entries.size >= maxSessions) return sendRpcError(res, 503, -32000, 'Too many open sessions', { 'retry-after': '5' });

    const session = o.gateway.openSession(client);
    // Plain JSON answers are faster; a client that can be asked for approval gets SSE answers, so
    // an elicitation request can travel on the stream of the call that needs it.
    const transport = new HttpSessionTransport({
      sessionId: session.id,
      jsonResponse: !declaresElicitation(body),
      dispatch: (request) => o.gateway.dispatch(session, request),
      onsessioninitialized: (id) => {
        const entry: Entry = { session, transport, client, lastSeen: Date.now() };
        entries.set(id, entry);
        let own = byClient.get(client);
        if (!own) byClient.set(client, (own = new Set()));
        own.add(entry);
      },
    });
    transport.onclose = () => {
      const entry = entries.get(session.id);
      entries.delete(session.id);
      if (entry) forget(entry);
      o.gateway.closeSession(session);
    };
    await session.server!.connect(transport);
    transport.handleRequest(req, res, body);
    if (!entries.has(session.id)) o.gateway.closeSession(session);
  }

  /**
   * Keeps a client within its sessions: at the limit, its least recently used session with no
   * request in flight is closed. False when every one of them is busy.
   */
  function makeRoomFor(client: ResolvedClient): boolean {
    const own = byClient.get(client);
    if (!own || own.size < sessionsPerClient) return true;
    let oldest: Entry | undefined;
    for (const e of own) if (!e.transport.busy() && (!oldest || e.lastSeen < oldest.lastSeen)) oldest = e;
    if (!oldest) return false;
    // Gone from the count now: its transport's close finishes the rest.
    entries.delete(oldest.session.id);
    forget(oldest);
    void oldest.transport.close();
    return true;
  }

  function forget(entry: Entry): void {
    const own = byClient.get(entry.client);
    own?.delete(entry);
    if (own?.size === 0) byClient.delete(entry.client);
  }

  /** The Retry-After header (the refusal counted) when the address has used up its allowance of failed authentications. */
  function retryAfter(on: FailureLimiter, address: string): { 'retry-after': string } | null {
    const blocked = on.blockedFor(address);
    if (blocked <= 0) return null;
    o.metrics.unauthorized.inc({ status: '429' });
    return { 'retry-after': String(Math.ceil(blocked / 1000)) };
  }

  /** A failed authentication: it spends the address's allowance and is counted. */
  function failed(on: FailureLimiter, address: string): void {
    on.fail(address);
    o.metrics.unauthorized.inc({ status: '401' });
  }

  async function metrics(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!o.metricsKeyDigest) return sendJson(res, 404, { error: 'metrics are not enabled (no metrics key configured)' });
    // Guesses at the metrics key are limited as guesses at client keys are, on an allowance of their own.
    const address = req.socket.remoteAddress ?? 'unknown';
    const wait = retryAfter(metricsLimiter, address);
    if (wait) return sendJson(res, 429, { error: 'too many failed authentications; try again later' }, wait);
    if (!keyMatches(req.headers.authorization, o.metricsKeyDigest)) {
      if (hasCredential(req.headers.authorization)) failed(metricsLimiter, address);
      else o.metrics.unauthorized.inc({ status: '401' });
      return sendJson(res, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer realm="toolgate-gateway-metrics"' });
    }
    const text = await o.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': o.metrics.registry.contentType, 'cache-control': 'no-store' });
    res.end(text);
  }

  const reaper = setInterval(
    () => {
      const cutoff = Date.now() - idleMs;
      for (const e of entries.values()) if (e.lastSeen < cutoff) void e.transport.close();
    },
    Math.min(60_000, idleMs),
  );
  reaper.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.listen.port, o.listen.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  ownOrigins = new Set([`http://${o.listen.host}:${port}`, `http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`]);
  const host = o.listen.host.includes(':') ? `[${o.listen.host}]` : o.listen.host;
  return {
    url: `http://${host}:${port}${o.listen.path}`,
    port,
    async close() {
      clearInterval(reaper);
      await Promise.all([...entries.values()].map((e) => e.transport.close().catch(() => undefined)));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function isInitialize(body: unknown): boolean {
  const one = Array.isArray(body) ? body : [body];
  return one.some((m) => (m as { method?: unknown } | null)?.method === 'initialize');
}

function declaresElicitation(body: unknown): boolean {
  const one = (Array.isArray(body) ? body : [body]).find((m) => (m as { method?: unknown } | null)?.method === 'initialize') as
    | { params?: { capabilities?: { elicitation?: unknown } } }
    | undefined;
  return one?.params?.capabilities?.elicitation !== undefined;
}

function readBody(req: IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        done = true;
        resolve('too_large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}
