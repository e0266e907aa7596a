import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { bearerActor, bearerHash } from '../auth/authenticate.ts';
import { permits } from '../auth/guard.ts';
import type { Actor, AppDeps } from '../context.ts';
import { addressOf } from '../http/client-address.ts';
import { logRequest, requestIdFor } from '../http/request-record.ts';
import type { ServedBundle } from './bundle-cache.ts';
import { bundleEncoding, bundleHeaders, clientHolds, heldVersion, parseIfNoneMatch } from './serving.ts';

/** Answers a request on the Node listener, before the app; false when it leaves the request to the app. */
export type ListenerShortcut = (incoming: IncomingMessage, outgoing: ServerResponse) => boolean;

const LATEST = /^\/v1\/tenants\/([a-z0-9-]{1,63})\/bundles\/latest$/;
const ROUTE = '/v1/tenants/:tenant/bundles/latest';
const LATEST_SUFFIX = '/bundles/latest';
const NO_WAIT = '?wait=0';
// The Host values @hono/node-server takes as they are; any other goes through its URL checks.
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
// Headers that cannot change the app's answer to this request (Node itself acts on `connection`).
// A header neither read here nor listed (a cookie, a body, an upgrade…) sends the request to the app.
const IRRELEVANT = new Set([
  'accept',
  'accept-language',
  'user-agent',
  'connection',
  'cache-control',
  'pragma',
  'priority',
  'sec-fetch-mode',
  'sec-fetch-site',
  'sec-fetch-dest',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-real-ip',
  'via',
  'forwarded',
]);

type PullHeaders = {
  host?: string;
  authorization?: string;
  ifNoneMatch?: string;
  acceptEncoding?: string;
  toolgateVersion?: string;
  requestId?: string;
  forwardedFor?: string;
};

/** What the shortcut reads: the same parts of the server's context the app's pull route uses. */
type PullDeps = Pick<AppDeps, 'tokens' | 'bundles' | 'failureLimiter' | 'config' | 'metrics' | 'logger' | 'authorizer'>;

/**
 * The conditional pull of `GET /v1/tenants/:tenant/bundles/latest` answered from memory: runtimes
 * ask again and again whether their bundle is still current, and that answer (304) needs no
 * routing, no Request/Response objects and no database. This path gives only the answer the app
 * would give, with the same headers, metrics and log line: when the token cache still trusts its
 * lookup of the bearer token, the token has not expired and may pull this tenant, the
 * failed-credential limiter does not hold the client back, and the bundle cache's latest bundle
 * of the tenant is fresh and matched by If-None-Match. Anything else (a long poll or any query but `wait=0`, an
 * unknown, revoked or expired token, another tenant, an odd header, Host or URL, a 200) is left to
 * the app, which stays the judge of every other answer.
 */
export function conditionalPulls(deps: PullDeps): ListenerShortcut {
  const tokens = deps.tokens;
  const bundles = deps.bundles;
  const limiter = deps.failureLimiter;
  const proxies = deps.config.trustedProxies ?? [];
  const tally = deps.metrics.requestTally({ method: 'GET', route: ROUTE, status: '304' });
  const answeredHere = deps.metrics.listenerPullAnswers;
  return (incoming, outgoing) => {
    const url = incoming.url;
    if (incoming.method !== 'GET' || url === undefined) return false;
    // `?wait=0` asks for the answer a pull without a query gets (the SDK sends it when it starts
    // and after losing the server): the app holds nothing and logs the same path.
    const path = url.endsWith(NO_WAIT) ? url.slice(0, -NO_WAIT.length) : url;
    // Every other request leaves at once: the header walk below is for bundle pulls only.
    if (!path.endsWith(LATEST_SUFFIX)) return false;
    const started = performance.now();
    const h = pullHeaders(incoming.rawHeaders);
    if (!h || !conditional(h)) return false;
    const c = connectionMemo(incoming.socket, path, h);
    if (c.tenant === undefined || c.tokenHash === undefined) return false;
    if (limiter.retryAfter(addressOf(incoming.socket.remoteAddress ?? 'unknown', () => h.forwardedFor, proxies)) > 0) return false;
    const now = Date.now();
    // Nothing cached (or a token known to be unknown): the app looks it up and judges it.
    const row = tokens.peek(c.tokenHash, now);
    const checked = row && bearerActor(row, now);
    if (!checked?.ok || !mayPull(deps, c, checked.actor)) return false;
    const latest = bundles.fresh(c.tenant, now);
    if (!latest) return false;
    const wire = answerFor(c, latest, h);
    if (!wire) return false;
    const requestId = requestIdFor(h.requestId);
    const seconds = (performance.now() - started) / 1000;
    outgoing.writeHead(304, [...wire.before, 'x-request-id', requestId, ...wire.after]);
    outgoing.end();
    // Recorded once answered: had writing thrown, the app would answer (and record) it instead.
    tally.add(seconds);
    answeredHere.inc();
    logRequest(deps.logger, { requestId, method: 'GET', route: ROUTE, path, status: 304, seconds });
    return true;
  };
}

/** A request this path may answer names its host and token and asks conditionally. */
type ConditionalHeaders = PullHeaders & { host: string; authorization: string; ifNoneMatch: string };

function conditional(h: PullHeaders): h is ConditionalHeaders {
  return h.host !== undefined && h.authorization !== undefined && h.ifNoneMatch !== undefined;
}

/** The headers this path reads, once each; undefined when one repeats or another is present. */
function pullHeaders(raw: string[]): PullHeaders | undefined {
  const h: PullHeaders = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    let key: keyof PullHeaders;
    switch (name) {
      case 'host':
        key = 'host';
        break;
      case 'authorization':
        key = 'authorization';
        break;
      case 'if-none-match':
        key = 'ifNoneMatch';
        break;
      case 'accept-encoding':
        key = 'acceptEncoding';
        break;
      case 'toolgate-version':
        key = 'toolgateVersion';
        break;
      case 'x-request-id':
        key = 'requestId';
        break;
      case 'x-forwarded-for':
        key = 'forwardedFor';
        break;
      default:
        if (IRRELEVANT.has(name)) continue;
        return undefined;
    }
    // Repeated, the app would see the values joined (or only the first): it judges that itself.
    if (h[key] !== undefined) return undefined;
    h[key] = raw[i + 1];
  }
  return h;
}

/** Headers of a 304 in the order the app writes them, split where X-Request-Id goes. */
type Wire = { before: string[]; after: string[] };

/**
 * What the previous request on a connection worked out, kept for the next: a runtime asks again
 * with the same URL and headers on a kept-alive connection, so hashing its token, parsing its
 * headers and deciding its role are done once per connection (and again when anything differs).
 * Nothing here is trusted on its own: the token cache, the token's expiry, the limiter and the
 * bundle cache are asked on every request, and a decision is reused only for the same holder of
 * the same cached token row and the same cached bundle.
 */
type ConnectionMemo = {
  path: string;
  tenant: string | undefined;
  host: string;
  authorization: string;
  tokenHash: string | undefined;
  actor: Actor | undefined;
  mayPull: boolean;
  ifNoneMatch: string;
  toolgateVersion: string | undefined;
  acceptEncoding: string | undefined;
  latest: ServedBundle | undefined;
  wire: Wire | undefined;
};

const connections = new WeakMap<Socket, ConnectionMemo>();

function connectionMemo(socket: Socket, path: string, h: ConditionalHeaders): ConnectionMemo {
  let c = connections.get(socket);
  if (!c) {
    c = {
      path: '',
      tenant: undefined,
      host: '',
      authorization: '',
      tokenHash: undefined,
      actor: undefined,
      mayPull: false,
      ifNoneMatch: '',
      toolgateVersion: undefined,
      acceptEncoding: undefined,
      latest: undefined,
      wire: undefined,
    };
    connections.set(socket, c);
  }
  if (c.path !== path || c.host !== h.host) {
    c.path = path;
    c.host = h.host;
    // Only the plain URL and Host the app would take as they are; the app judges any other.
    c.tenant = PLAIN_HOST.test(h.host) ? LATEST.exec(path)?.[1] : undefined;
    c.actor = undefined;
    c.latest = undefined;
  }
  if (c.authorization !== h.authorization) {
    c.authorization = h.authorization;
    c.tokenHash = bearerHash(h.authorization);
    c.actor = undefined;
  }
  if (c.ifNoneMatch !== h.ifNoneMatch || c.toolgateVersion !== h.toolgateVersion || c.acceptEncoding !== h.acceptEncoding) {
    c.ifNoneMatch = h.ifNoneMatch;
    c.toolgateVersion = h.toolgateVersion;
    c.acceptEncoding = h.acceptEncoding;
    c.latest = undefined;
  }
  return c;
}

/** Whether the holder of a bearer token may pull the memo's tenant: authorize()'s rules. */
function mayPull(deps: Pick<AppDeps, 'authorizer'>, c: ConnectionMemo, actor: Actor): boolean {
  if (actor !== c.actor) {
    c.actor = actor;
    c.mayPull = c.tenant !== undefined && permits(deps.authorizer, actor, 'bundle', 'pull', c.tenant);
  }
  return c.mayPull;
}

/** The 304's headers when the client holds `latest`; undefined when the app must send it (a 200). */
function answerFor(c: ConnectionMemo, latest: ServedBundle, h: ConditionalHeaders): Wire | undefined {
  if (latest !== c.latest) {
    c.latest = latest;
    c.wire = undefined;
    if (clientHolds(latest, parseIfNoneMatch(h.ifNoneMatch), heldVersion(h.toolgateVersion))) {
      c.wire = wireOrder(bundleHeaders(latest, 'latest', bundleEncoding(h.acceptEncoding)).notModified);
    }
  }
  return c.wire;
}

const wireOrders = new WeakMap<Record<string, string>, Wire>();

/**
 * The 304's headers as the app writes them: from a Fetch `Headers` list, so names in lower case
 * and sorted, X-Request-Id among them.
 */
function wireOrder(notModified: Record<string, string>): Wire {
  let wire = wireOrders.get(notModified);
  if (!wire) {
    const before: string[] = [];
    const after: string[] = [];
    for (const name of Object.keys(notModified).sort()) (name < 'x-request-id' ? before : after).push(name, notModified[name]);
    wire = { before, after };
    wireOrders.set(notModified, wire);
  }
  return wire;
}
