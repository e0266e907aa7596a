import { serveStatic } from '@hono/node-server/serve-static';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { type Context, Hono } from 'hono';
import { MemoRouter } from './http/memo-router.ts';
import { bodyLimit } from 'hono/body-limit';
import { compress } from 'hono/compress';
import { routePath } from 'hono/route';
import { approvalRoutes } from './api/approvals.ts';
import { auditRoutes } from './api/audit.ts';
import { bundlePublishRoutes } from './api/bundles-publish.ts';
import { bundleServeRoutes } from './api/bundles-serve.ts';
import { decisionRoutes, impactRoutes } from './api/decisions.ts';
import { groupRoutes, stateRoutes } from './api/groups-states.ts';
import { subjectRoutes, toolUsageRoutes } from './api/insight.ts';
import { jwksRoutes } from './api/jwks.ts';
import { keyRoutes } from './api/keys.ts';
import { mcpServerRoutes } from './api/mcp-servers.ts';
import { openApiRoutes } from './api/openapi.ts';
import { overviewRoutes } from './api/overview.ts';
import { policyResetRoutes } from './api/policy-reset.ts';
import { policyTestRoutes } from './api/policy-tests.ts';
import { promoteRoutes } from './api/promote.ts';
import { publishRequestRoutes } from './api/publish-requests.ts';
import { runtimeRoutes } from './api/runtimes.ts';
import { ssoSessionRoutes } from './api/session-sso.ts';
import { sessionRoutes } from './api/session.ts';
import { ssoMappingRoutes } from './api/sso-mappings.ts';
import { simulateRoutes } from './api/simulate.ts';
import { grantRoutes, tenantRoutes } from './api/tenants.ts';
import { tokenRoutes } from './api/tokens.ts';
import { toolApprovalRoutes } from './api/tool-approval.ts';
import { toolListRoutes } from './api/tools-list.ts';
import { toolRoutes } from './api/tools.ts';
import { authenticate } from './auth/authenticate.ts';
import { authorize } from './auth/guard.ts';
import type { AppDeps, AppEnv } from './context.ts';
import { databaseUnavailable } from './db/database.ts';
import { ApiError } from './errors.ts';
import { MAX_BODY_BYTES } from './http/body.ts';
import { recordRequest, requestIdFor } from './http/request-record.ts';

// Routes that answer without a token.
const PUBLIC_V1 = new Set(['/v1/session', '/v1/openapi.json', '/v1/session/sso', '/v1/session/sso/start', '/v1/session/sso/callback']);
// Bundle bytes and signatures: served by the distribution code with its own encoding and validators.
const BUNDLE_BYTES = /^\/v1\/tenants\/[^/]+\/bundles\/(?:latest|\d+)(?:\/signature)?\/?$/;

/** The whole HTTP surface: API under /v1, health, metrics, and the console at `/`. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>({ router: new MemoRouter() });

  app.use('*', async (c, next) => {
    const requestId = requestIdFor(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    c.set('deps', deps);
    c.set('actor', null);
    c.header('X-Request-Id', requestId);
    const started = performance.now();
    await next();
    // An answer sent before the body was read (413, 401…): the rest of the body is still on its
    // way, so the connection cannot carry another request; say so rather than drop it later.
    if (bodyLeftUnread(c.env)) closeAfter(c);
    const seconds = (performance.now() - started) / 1000;
    recordRequest(deps, { requestId, method: c.req.method, route: routePath(c) || 'unmatched', path: c.req.path, status: c.res.status, seconds });
  });

  app.onError((err, c) => {
    const requestId = c.get('requestId') ?? 'unknown';
    if (err instanceof ApiError) {
      return c.json(err.toProblem(requestId), err.status as 400, { ...err.details.headers, 'Content-Type': 'application/problem+json' });
    }
    if (databaseUnavailable(err)) {
      // The request may be fine; the database is not reachable just now. Runtimes back off on 503.
      // (The problem code stays `internal`: the public list of codes has none for this.)
      deps.logger.warn({ requestId, err: { name: err.name, message: err.message } }, 'database unavailable');
      const unavailable = new ApiError(503, 'internal', `The database cannot be reached just now; try again shortly (request id ${requestId})`);
      return c.json(unavailable.toProblem(requestId), 503, { 'Content-Type': 'application/problem+json', 'Retry-After': '5' });
    }
    deps.logger.error({ requestId, err: { name: err.name, message: err.message, stack: err.stack } }, 'unhandled error');
    const internal = new ApiError(500, 'internal', `Something went wrong on the server; quote request id ${requestId}`);
    return c.json(internal.toProblem(requestId), 500, { 'Content-Type': 'application/problem+json' });
  });

  // A NUL in a path segment or query value is never a valid id or filter, and PostgreSQL cannot
  // even compare text with one: refused up front, the same on both engines.
  app.use('*', async (c, next) => {
    if (c.req.url.includes('%00')) {
      throw new ApiError(400, 'validation', 'The URL contains a NUL character (%00)', { errors: [{ pointer: '', message: 'the URL contains %00' }] });
    }
    await next();
  });

  app.get('/healthz', (c) => c.json({ ok: true }));
  app.route('/.well-known', jwksRoutes);
  // Metrics reveal traffic, routes and timing: an admin's or auditor's token unless the operator opens them.
  app.get(
    '/metrics',
    (c, next) => (deps.config.metricsPublic ? next() : authenticate(c, next)),
    async (c) => {
      if (!deps.config.metricsPublic) authorize(c, 'metrics', 'read');
      return c.text(await deps.metrics.registry.metrics(), 200, { 'Content-Type': deps.metrics.registry.contentType, 'Cache-Control': 'no-store' });
    },
  );

  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new ApiError(413, 'payload_too_large', `The body is larger than ${MAX_BODY_BYTES} bytes`);
    },
  });
  // GET/HEAD handlers read no body; bodyLimit would still build a full Request for each (hot on bundle pulls).
  app.use('/v1/*', (c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next)));
  // JSON answers go out compressed; bundle bytes keep their own precomputed gzip and ETag (and long-poll).
  const compressJson = compress({ contentTypeFilter: /^application\/(?:problem\+)?json/ });
  app.use('/v1/*', (c, next) => (BUNDLE_BYTES.test(c.req.path) ? next() : compressJson(c, next)));
  app.use('/v1/*', async (c, next) => (PUBLIC_V1.has(c.req.path.replace(/\/$/, '')) ? next() : authenticate(c, next)));

  app.route('/v1/session/sso', ssoSessionRoutes);
  app.route('/v1/session', sessionRoutes);
  app.route('/v1/sso/mappings', ssoMappingRoutes);
  app.route('/v1/openapi.json', openApiRoutes);
  app.route('/v1/tokens', tokenRoutes);
  app.route('/v1/tools', toolApprovalRoutes);
  app.route('/v1/tools', toolUsageRoutes);
  app.route('/v1/subjects', subjectRoutes);
  app.route('/v1/tools', toolListRoutes);
  app.route('/v1/tools', toolRoutes);
  app.route('/v1/mcp-servers', mcpServerRoutes);
  app.route('/v1/groups', groupRoutes);
  app.route('/v1/states', stateRoutes);
  app.route('/v1/tenants', policyResetRoutes);
  app.route('/v1/tenants', tenantRoutes);
  app.route('/v1/tenants/:tenant/grants', grantRoutes);
  app.route('/v1/audit', auditRoutes);
  app.route('/v1/overview', overviewRoutes);
  app.route('/v1/keys', keyRoutes);
  app.route('/v1/tenants/:tenant/bundles', bundleServeRoutes);
  app.route('/v1/tenants/:tenant/runtimes', runtimeRoutes);
  app.route('/v1/tenants/:tenant/simulate', simulateRoutes);
  app.route('/v1/tenants/:tenant/tests', policyTestRoutes);
  app.route('/v1/tenants/:tenant/decisions', decisionRoutes);
  app.route('/v1/tenants/:tenant/impact', impactRoutes);
  app.route('/v1/tenants/:tenant/approvals', approvalRoutes);
  app.route('/v1/tenants/:tenant/bundles', bundlePublishRoutes);
  app.route('/v1/tenants/:tenant/publish-requests', publishRequestRoutes);
  app.route('/v1/tenants/:tenant/promote', promoteRoutes);
  // Further areas mount here, before the /v1 catch-all below.

  app.all('/v1/*', (c) => {
    throw new ApiError(404, 'not_found', `No route ${c.req.method} ${c.req.path}`);
  });

  mountConsole(app, deps.config.webDir);
  return app;
}

function closeAfter(c: Context<AppEnv>): void {
  try {
    c.res.headers.set('Connection', 'close');
  } catch {
    // A response with immutable headers (one passed through from elsewhere): copy it.
    const headers = new Headers(c.res.headers);
    headers.set('Connection', 'close');
    c.res = new Response(c.res.body, { status: c.res.status, statusText: c.res.statusText, headers });
  }
}

/** True when the request (served by Node) has a body that was not read to its end. */
function bodyLeftUnread(env: unknown): boolean {
  const incoming = (env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming || incoming.readableEnded) return false;
  const length = incoming.headers['content-length'];
  return (length !== undefined && length !== '0') || incoming.headers['transfer-encoding'] !== undefined;
}

/**
 * Serves the built console with an SPA fallback to index.html: hashed assets precompressed (brotli,
 * gzip) and cached as immutable; the HTML never cached and sent with strict security headers.
 */
function mountConsole(app: Hono<AppEnv>, webDir: string | null): void {
  const index = webDir ? join(webDir, 'index.html') : null;
  if (!webDir || !index || !existsSync(index)) {
    app.get('/', (c) => c.text('Toolgate API is running. The console is not built: run `npm run build:web`.', 200));
    return;
  }
  app.use('/assets/*', async (c, next) => {
    await next();
    // File names carry a content hash: a changed file is a new URL.
    if (c.res.status === 200 && !c.res.headers.get('Content-Type')?.startsWith('text/html'))
      c.res.headers.set('Cache-Control', 'public, max-age=31536000, immutable');
  });
  app.use('/assets/*', serveStatic({ root: webDir, precompressed: true }));
  app.use('*', async (c, next) => {
    await next();
    if (c.res.headers.get('Content-Type')?.startsWith('text/html')) {
      for (const [name, value] of Object.entries(CONSOLE_HEADERS)) c.res.headers.set(name, value);
    }
  });
  app.use('*', serveStatic({ root: webDir, precompressed: true }));
  const html = readFileSync(index, 'utf8');
  app.get('*', (c) => c.html(html));
}

/** Security headers of the console's HTML: nothing but its own scripts, styles and API; never framed. */
export const CONSOLE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-cache',
};
