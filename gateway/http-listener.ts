import { createServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClientKeys, FailureLimiter, keyMatches } from './client-keys.ts';
import type { ResolvedClient, ResolvedConfig } from './config.ts';
import type { Gateway, GatewaySession } from './gateway.ts';
import { HttpSessionTransport } from './http-session-transport.ts';
import type { GatewayMetrics } from './metrics.ts';

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
  let ownOrigins = new Set<string>();

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
    if (path !== o.listen.path) return sendJson(res, 404, { error: 'not found' });

    const origin = req.headers.origin;
    if (origin !== undefined && !ownOrigins.has(origin) && !o.listen.allowedOrigins.includes(origin)) {
      return sendRpcError(res, 403, -32000, 'Forbidden: this Origin may not use the gateway', { connection: 'close' });
    }
    const address = req.socket.remoteAddress ?? 'unknown';
    const wait = retryAfter(limiter, address);
    if (wait) return sendRpcError(res, 429, -32000, 'Too many failed authentications; try again later', { ...wait, connection: 'close' });
    const client = keys.authenticateOn(req.socket, req.headers.authorization);
    if (!client) {
      failed(limiter, address);
      return sendRpcError(res, 401, -32000, 'Unauthorized: a known client key is required (Authorization: Bearer <key>)', {
        'www-authenticate': 'Bearer realm="toolgate-gateway"',
        connection: 'close',
      });
    }

    let body: unknown;
    if (req.method === 'POST') {
      const read = await readBody(req);
      if (read === 'too_large') return sendRpcError(res, 413, -32600, 'Request body too large', { connection: 'close' });
      try {
        body = JSON.parse(read.toString('utf8'));
      } catch {
        return sendRpcError(res, 400, -32700, 'Parse error: the body is not JSON');
      }
    }

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
    if (entries.size >= maxSessions) return sendRpcError(res, 503, -32000, 'Too many open sessions', { 'retry-after': '5' });

    const session = o.gateway.openSession(client);
    // Plain JSON answers are faster; a client that can be asked for approval gets SSE answers, so
    // an elicitation request can travel on the stream of the call that needs it.
    const transport = new HttpSessionTransport({
      sessionId: session.id,
      jsonResponse: !declaresElicitation(body),
      dispatch: (request) => o.gateway.dispatch(session, request),
      onsessioninitialized: (id) => {
        entries.set(id, { session, transport, client, lastSeen: Date.now() });
      },
    });
    transport.onclose = () => {
      entries.delete(session.id);
      o.gateway.closeSession(session);
    };
    await session.server.connect(transport);
    transport.handleRequest(req, res, body);
    if (!entries.has(session.id)) o.gateway.closeSession(session);
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
      failed(metricsLimiter, address);
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
