// The listener's shortcut for conditional pulls (server/distribution/conditional-pull.ts) against
// the app it stands in front of. Three servers share one database and its caches:
//  - `srv`, as `toolgate serve` runs: the shortcut, then the app for whatever it leaves;
//  - `plain`: the same app with no shortcut (the answer each request must get);
//  - `probe`: the shortcut alone, answering 599 for each request it leaves to the app.
import { serve } from '@hono/node-server';
import { once } from 'node:events';
import { Agent, type OutgoingHttpHeaders, type Server, createServer, request } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.ts';
import { insertToken } from '../../server/auth/tokens.ts';
import { conditionalPulls } from '../../server/distribution/conditional-pull.ts';
import { parseTrustedProxies } from '../../server/http/client-address.ts';
import { ADMIN_TOKEN, startLiveServer } from './live-server.ts';
import type { LiveServer } from './live-server.ts';
import { makeKey, makeSignedBundle } from './signed-bundles.ts';
import type { SignedBundle, TestKey } from './signed-bundles.ts';

const LEFT = 599;
const REQUEST_ID = { 'x-request-id': 'conditional-pull-test' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const latestOf = (tenant: string) => `/v1/tenants/${tenant}/bundles/latest`;

type Answer = { status: number; headers: [string, string][]; body: string };
type Trio = { srv: LiveServer; plainPort: number; probePort: number; close: () => Promise<void> };

/** A live server, the same app served plainly, and the shortcut alone, on one database. */
async function startTrio(opts: Parameters<typeof startLiveServer>[0] = {}): Promise<Trio> {
  const srv = await startLiveServer(opts);
  const plain = serve({ fetch: createApp(srv.deps).fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  const shortcut = conditionalPulls(srv.deps);
  const probe = createServer((incoming, outgoing) => {
    if (shortcut(incoming, outgoing)) return;
    incoming.resume();
    outgoing.writeHead(LEFT).end();
  });
  probe.listen(0, '127.0.0.1');
  await Promise.all([plain.listening || once(plain, 'listening'), once(probe, 'listening')]);
  return {
    srv,
    plainPort: (plain.address() as AddressInfo).port,
    probePort: (probe.address() as AddressInfo).port,
    async close() {
      plain.closeAllConnections();
      probe.closeAllConnections();
      await Promise.all([new Promise((r) => plain.close(r)), new Promise((r) => probe.close(r))]);
      await srv.dispose();
    },
  };
}

/** One request; the answer's headers as written (order and case kept), Date left out. */
function ask(port: number, path: string, headers: OutgoingHttpHeaders, opts: { method?: string; agent?: Agent; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers, agent: opts.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i] !== 'Date') pairs.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks).toString('latin1') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** One request written byte for byte (for what node:http will not send), the whole answer with Date blanked. */
function askRaw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    socket.on('end', () => resolve(out.replace(/^Date: .*$/m, 'Date: -')));
    socket.on('error', reject);
  });
}

/** The answer with a generated request id replaced by a marker (after checking it is a UUID). */
function withoutGeneratedId(a: Answer): Answer {
  return {
    ...a,
    headers: a.headers.map(([k, v]): [string, string] => {
      if (k.toLowerCase() !== 'x-request-id' || v === REQUEST_ID['x-request-id']) return [k, v];
      expect(v).toMatch(UUID);
      return [k, 'generated'];
    }),
    body: a.body.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'generated'),
  };
}

let key: TestKey;
let t: Trio;
let acme: string;
let globex: string;
let v1: SignedBundle;
let v2: SignedBundle;
let etag2: string;
let globexEtag: string;

/** How many pulls the server's listener answered itself, as its /metrics says. */
async function answeredByListener(srv: LiveServer): Promise<number> {
  return Number(/^toolgate_listener_pull_answers_total (\d+)$/m.exec((await srv.api('GET', '/metrics')).text)?.[1] ?? Number.NaN);
}

/** Pulls through the app, so the token cache and the bundle cache hold fresh answers for the shortcut. */
async function warm(token: string, tenant = 'acme', trio = t): Promise<void> {
  await ask(trio.plainPort, latestOf(tenant), { authorization: `Bearer ${token}`, 'if-none-match': '"warm-up"' });
}

beforeAll(async () => {
  key = await makeKey('k1');
  t = await startTrio();
  await t.srv.createTenant('acme');
  await t.srv.createTenant('globex');
  await t.srv.createTenant('empty');
  acme = await t.srv.tokenFor('runtime', ['acme']);
  globex = await t.srv.tokenFor('runtime', ['globex']);
  v1 = await makeSignedBundle({ tenant: 'acme', version: 1 }, key);
  v2 = await makeSignedBundle({ tenant: 'acme', version: 2, flavor: 'second', previousRevision: v1.bundle.revision }, key);
  await t.srv.place('acme', 1, { ...v1, revision: v1.bundle.revision });
  await t.srv.place('acme', 2, { ...v2, revision: v2.bundle.revision });
  etag2 = `"${v2.bundle.revision}"`;
  const g = await makeSignedBundle({ tenant: 'globex', version: 1 }, key);
  await t.srv.place('globex', 1, { ...g, revision: g.bundle.revision });
  globexEtag = `"${g.bundle.revision}"`;
});

afterAll(async () => {
  await t?.close();
});

describe('conditional pulls the listener answers itself', () => {
  const answered: [string, () => { path?: string; headers: OutgoingHttpHeaders; token?: string }][] = [
    ['a matching ETag', () => ({ headers: { 'if-none-match': etag2 } })],
    ['a gzip pull with the weak ETag', () => ({ headers: { 'if-none-match': `W/${etag2}`, 'accept-encoding': 'gzip' } })],
    ['a brotli pull', () => ({ headers: { 'if-none-match': etag2, 'accept-encoding': 'gzip, deflate, br' } })],
    ['a pull refusing gzip', () => ({ headers: { 'if-none-match': etag2, 'accept-encoding': 'gzip;q=0' } })],
    ['a list of ETags', () => ({ headers: { 'if-none-match': `"other", W/${etag2}` } })],
    ['If-None-Match: *', () => ({ headers: { 'if-none-match': '*' } })],
    ['the version held said to be the latest', () => ({ headers: { 'if-none-match': etag2, 'toolgate-version': '2' } })],
    ['a lower-case bearer scheme', () => ({ headers: { 'if-none-match': etag2, authorization: `bearer ${acme}` } })],
    [
      'headers that do not change the answer',
      () => ({ headers: { 'if-none-match': etag2, 'user-agent': 'rt/1', accept: 'application/json', 'cache-control': 'no-cache' } }),
    ],
    ['X-Forwarded-For with no trusted proxy', () => ({ headers: { 'if-none-match': etag2, 'x-forwarded-for': '203.0.113.9' } })],
    ['an admin token', () => ({ headers: { 'if-none-match': etag2 }, token: ADMIN_TOKEN })],
    // Hosts the listener takes as they are, as @hono/node-server does: each pins that agreement
    // against an upgrade of the library (an odd Host is left to the app, below).
    ['a Host name without a port', () => ({ headers: { 'if-none-match': etag2, host: 'toolgate.example' } })],
    ['a Host name with a port', () => ({ headers: { 'if-none-match': etag2, host: 'tg-1.internal:8443' } })],
    ['a Host with an underscore and a five-digit port', () => ({ headers: { 'if-none-match': etag2, host: 'tg_a.example:50000' } })],
    // What the runtime SDK sends when it starts and after losing the server: no wait, so nothing held.
    ['a pull that asks not to wait (?wait=0)', () => ({ path: `${latestOf('acme')}?wait=0`, headers: { 'if-none-match': etag2, 'toolgate-version': '2' } })],
  ];

  for (const [name, make] of answered) {
    it(`answers ${name} with the app's 304, byte for byte`, async () => {
      const { path = latestOf('acme'), headers, token = acme } = make();
      const all = { authorization: `Bearer ${token}`, ...REQUEST_ID, ...headers };
      await warm(token);
      const viaApp = await ask(t.plainPort, path, all);
      await warm(token);
      const viaShortcut = await ask(t.probePort, path, all);
      await warm(token);
      const before = await answeredByListener(t.srv);
      const viaServer = await ask(t.srv.port, path, all);
      expect(await answeredByListener(t.srv)).toBe(before + 1);
      expect(viaApp.status).toBe(304);
      expect(viaShortcut).toEqual(viaApp);
      expect(viaServer).toEqual(viaApp);
    });
  }

  it('makes a request id when the caller sends none (or an unusable one), as the app does', async () => {
    for (const extra of [{}, { 'x-request-id': 'two words' }]) {
      const headers = { authorization: `Bearer ${acme}`, 'if-none-match': etag2, ...extra };
      await warm(acme);
      const viaApp = withoutGeneratedId(await ask(t.plainPort, latestOf('acme'), headers));
      await warm(acme);
      const viaShortcut = withoutGeneratedId(await ask(t.probePort, latestOf('acme'), headers));
      expect(viaShortcut).toEqual(viaApp);
      expect(viaApp.headers).toContainEqual(['x-request-id', 'generated']);
    }
  });

  it('answers an HTTP/1.0 pull as the app does', async () => {
    const text = `GET ${latestOf('acme')} HTTP/1.0\r\nHost: 127.0.0.1:8787\r\nAuthorization: Bearer ${acme}\r\nIf-None-Match: ${etag2}\r\nX-Request-Id: one-oh\r\n\r\n`;
    await warm(acme);
    const viaApp = await askRaw(t.plainPort, text);
    await warm(acme);
    const viaShortcut = await askRaw(t.probePort, text);
    expect(viaApp).toMatch(/^HTTP\/1\.1 304 /);
    expect(viaShortcut).toBe(viaApp);
  });
});

describe('requests the listener leaves to the app', () => {
  const left: [string, () => { path?: string; headers?: OutgoingHttpHeaders; token?: string | null; method?: string; body?: string }][] = [
    ['an unconditional pull', () => ({})],
    ['an ETag that is not the latest', () => ({ headers: { 'if-none-match': `"${v1.bundle.revision}"` } })],
    ['a client holding an older version of the same content', () => ({ headers: { 'if-none-match': etag2, 'toolgate-version': '1' } })],
    ['a long poll', () => ({ path: `${latestOf('acme')}?wait=1`, headers: { 'if-none-match': etag2 } })],
    ['wait=0 written another way', () => ({ path: `${latestOf('acme')}?wait=00`, headers: { 'if-none-match': etag2 } })],
    ['any query', () => ({ path: `${latestOf('acme')}?x=1`, headers: { 'if-none-match': etag2 } })],
    ['a trailing slash', () => ({ path: `${latestOf('acme')}/`, headers: { 'if-none-match': etag2 } })],
    ['a percent-encoded tenant', () => ({ path: latestOf('acm%65'), headers: { 'if-none-match': etag2 } })],
    ['a NUL in the URL', () => ({ path: latestOf('acme%00'), headers: { 'if-none-match': etag2 } })],
    ['an unknown token', () => ({ headers: { 'if-none-match': etag2 }, token: 'tg_not-a-token-of-this-server' })],
    [
      'a header that is not a bearer token',
      () => ({ headers: { 'if-none-match': etag2, authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, token: null }),
    ],
    ['no token', () => ({ headers: { 'if-none-match': etag2 }, token: null })],
    ['a token of another tenant', () => ({ headers: { 'if-none-match': etag2 }, token: globex })],
    ['a tenant with no bundle', () => ({ path: latestOf('empty'), headers: { 'if-none-match': etag2 } })],
    ['a tenant that does not exist', () => ({ path: latestOf('nowhere'), headers: { 'if-none-match': etag2 }, token: ADMIN_TOKEN })],
    ['a cookie beside the token', () => ({ headers: { 'if-none-match': etag2, cookie: 'toolgate_session=abc' } })],
    ['Authorization twice', () => ({ headers: { 'if-none-match': etag2, authorization: [`Bearer ${acme}`, `Bearer ${globex}`] }, token: null })],
    ['If-None-Match twice', () => ({ headers: { 'if-none-match': ['"other"', etag2] } })],
    ['a body on the GET', () => ({ headers: { 'if-none-match': etag2, 'content-length': '2' }, body: 'xx' })],
    ['a Host in capitals', () => ({ headers: { 'if-none-match': etag2, host: 'LOCALHOST' } })],
    ['a Host with port 80', () => ({ headers: { 'if-none-match': etag2, host: 'localhost:80' } })],
    ['a HEAD', () => ({ headers: { 'if-none-match': etag2 }, method: 'HEAD' })],
    ['an absolute-form URL', () => ({ path: `http://127.0.0.1${latestOf('acme')}`, headers: { 'if-none-match': etag2 } })],
  ];

  for (const [name, make] of left) {
    it(`leaves ${name} to the app, which answers as without the shortcut`, async () => {
      const { path = latestOf('acme'), headers = {}, token = acme, method, body } = make();
      const all = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...REQUEST_ID, ...headers };
      await warm(acme);
      if (token) await warm(token);
      const viaShortcut = await ask(t.probePort, path, all, { method, body });
      expect(viaShortcut.status).toBe(LEFT);
      const viaApp = await ask(t.plainPort, path, all, { method, body });
      const before = await answeredByListener(t.srv);
      const viaServer = await ask(t.srv.port, path, all, { method, body });
      expect(await answeredByListener(t.srv)).toBe(before);
      expect(viaServer).toEqual(viaApp);
    });
  }

  it('leaves an HTTP/1.0 pull without Host to the app', async () => {
    const text = `GET ${latestOf('acme')} HTTP/1.0\r\nAuthorization: Bearer ${acme}\r\nIf-None-Match: ${etag2}\r\nX-Request-Id: one-oh\r\n\r\n`;
    await warm(acme);
    expect(await askRaw(t.probePort, text)).toMatch(/^HTTP\/1\.1 599 /);
    expect(await askRaw(t.srv.port, text)).toBe(await askRaw(t.plainPort, text));
  });

  it('refuses an expired token whose lookup is still cached', async () => {
    const secret = 'tg_expired-token-for-the-shortcut-test-0123456789';
    await insertToken(t.srv.deps.database.db, {
      id: 'expired-runtime',
      label: 'expired runtime',
      role: 'runtime',
      tenants: ['acme'],
      secret,
      now: '2020-01-01T00:00:00.000Z',
      expiresAt: '2020-01-02T00:00:00.000Z',
    });
    const headers = { authorization: `Bearer ${secret}`, 'if-none-match': etag2, ...REQUEST_ID };
    const first = await ask(t.plainPort, latestOf('acme'), headers);
    expect(first.status).toBe(401);
    expect(first.body).toContain('expired');
    // The row is now in the token cache: only the expiry check stands between it and a 304.
    expect((await ask(t.probePort, latestOf('acme'), headers)).status).toBe(LEFT);
    expect(await ask(t.srv.port, latestOf('acme'), headers)).toEqual(first);
  });
});

describe('a kept-alive runtime connection', () => {
  it('is refused right after its token is revoked', async () => {
    const created = await t.srv.api('POST', '/v1/tokens', { body: { label: 'revoked soon', role: 'runtime', tenants: ['acme'] } });
    expect(created.status).toBe(201);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const headers = { authorization: `Bearer ${created.json.token}`, 'if-none-match': etag2 };
    try {
      expect((await ask(t.srv.port, latestOf('acme'), headers, { agent })).status).toBe(304);
      // The second pull is the listener's own: the connection's memo and the token cache are warm.
      const before = await answeredByListener(t.srv);
      expect((await ask(t.srv.port, latestOf('acme'), headers, { agent })).status).toBe(304);
      expect(await answeredByListener(t.srv)).toBe(before + 1);
      const revoked = await t.srv.api('DELETE', `/v1/tokens/${created.json.id}`, { headers: { 'if-match': created.headers.get('etag') ?? '' } });
      expect(revoked.status).toBe(204);
      const after = await ask(t.srv.port, latestOf('acme'), headers, { agent });
      expect(after.status).toBe(401);
      expect(after.body).toContain('unknown or was revoked');
      expect(await answeredByListener(t.srv)).toBe(before + 1);
    } finally {
      agent.destroy();
    }
  });

  it("gets another tenant's answer from the app, not the previous request's", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // Both tenants' bundles fresh in the cache: only the token's reach tells the two requests apart.
      await warm(globex, 'globex');
      await warm(acme);
      expect((await ask(t.srv.port, latestOf('acme'), { authorization: `Bearer ${acme}`, 'if-none-match': etag2 }, { agent })).status).toBe(304);
      // Same connection, same token, the other tenant's URL and its current ETag.
      const other = await ask(t.srv.port, latestOf('globex'), { authorization: `Bearer ${acme}`, 'if-none-match': globexEtag }, { agent });
      expect(other.status).toBe(404);
      expect(other.body).toContain('tenant globex does not exist');
      await warm(globex, 'globex');
      expect((await ask(t.srv.port, latestOf('globex'), { authorization: `Bearer ${globex}`, 'if-none-match': globexEtag }, { agent })).status).toBe(304);
      expect((await ask(t.srv.port, latestOf('globex'), { authorization: `Bearer ${globex}`, 'if-none-match': etag2 }, { agent })).status).toBe(200);
    } finally {
      agent.destroy();
    }
  });

  it("answers each request for its own token when tokens of other tenants, an admin's and a revoked one take turns", async () => {
    const created = await t.srv.api('POST', '/v1/tokens', { body: { label: 'revoked mid-connection', role: 'runtime', tenants: ['acme'] } });
    expect(created.status).toBe(201);
    const revoked = created.json.token as string;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let connections = 0;
    const connect = agent.createConnection.bind(agent);
    agent.createConnection = (...args: Parameters<typeof connect>) => {
      connections++;
      return connect(...args);
    };
    const pull = async (token: string, tenant: string, etag: string) => {
      const before = await answeredByListener(t.srv);
      const a = await ask(t.srv.port, latestOf(tenant), { authorization: `Bearer ${token}`, 'if-none-match': etag }, { agent });
      return { status: a.status, body: a.body, byListener: (await answeredByListener(t.srv)) - before };
    };
    const held = { status: 304, body: '', byListener: 1 };
    try {
      const warmAll = async () => {
        // On other connections: the token cache is cleared by a revocation and trusts a lookup 2 s.
        for (const token of [acme, globex, ADMIN_TOKEN, revoked]) await warm(token);
        await warm(globex, 'globex');
      };
      await warmAll();
      expect(await pull(revoked, 'acme', etag2)).toEqual(held);
      const gone = await t.srv.api('DELETE', `/v1/tokens/${created.json.id}`, { headers: { 'if-match': created.headers.get('etag') ?? '' } });
      expect(gone.status).toBe(204);
      for (let round = 0; round < 2; round++) {
        await warmAll();
        expect(await pull(acme, 'acme', etag2)).toEqual(held);
        const otherTenant = await pull(globex, 'acme', etag2);
        expect(otherTenant).toMatchObject({ status: 404, byListener: 0 });
        expect(otherTenant.body).toContain('tenant acme does not exist');
        expect(await pull(ADMIN_TOKEN, 'acme', etag2)).toEqual(held);
        const afterRevoke = await pull(revoked, 'acme', etag2);
        expect(afterRevoke).toMatchObject({ status: 401, byListener: 0 });
        expect(afterRevoke.body).toContain('unknown or was revoked');
        expect(await pull(globex, 'globex', globexEtag)).toEqual(held);
        const acmeTokenOnGlobex = await pull(acme, 'globex', globexEtag);
        expect(acmeTokenOnGlobex).toMatchObject({ status: 404, byListener: 0 });
        expect(await pull(ADMIN_TOKEN, 'globex', globexEtag)).toEqual(held);
        // globex's token naming acme's ETag on its own tenant: globex's bundle, not a 304.
        const news = await pull(globex, 'globex', etag2);
        expect(news).toMatchObject({ status: 200, byListener: 0 });
        expect(JSON.parse(news.body)).toMatchObject({ tenant: 'globex' });
      }
      expect(connections).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it("answers each request by its own Toolgate-Version and Accept-Encoding, not the previous request's", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const appAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    const base = { authorization: `Bearer ${acme}`, ...REQUEST_ID, 'if-none-match': etag2 };
    const steps: OutgoingHttpHeaders[] = [
      { 'toolgate-version': '2' },
      // Holding version 1 of the same content: the bundle, though the ETag is the latest's.
      { 'toolgate-version': '1' },
      { 'toolgate-version': '2' },
      { 'accept-encoding': 'gzip' },
      { 'accept-encoding': 'identity' },
      { 'accept-encoding': 'br' },
    ];
    try {
      const statuses: number[] = [];
      for (const extra of steps) {
        await warm(acme);
        const viaApp = await ask(t.plainPort, latestOf('acme'), { ...base, ...extra }, { agent: appAgent });
        await warm(acme);
        const viaServer = await ask(t.srv.port, latestOf('acme'), { ...base, ...extra }, { agent });
        expect(viaServer, JSON.stringify(extra)).toEqual(viaApp);
        statuses.push(viaServer.status);
      }
      expect(statuses).toEqual([304, 200, 304, 304, 304, 304]);
    } finally {
      agent.destroy();
      appAgent.destroy();
    }
  });

  it('gets the new bundle as soon as one is published, not a 304 for the old ETag', async () => {
    const trio = await startTrio();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await trio.srv.createTenant('acme');
      const token = await trio.srv.tokenFor('runtime', ['acme']);
      await trio.srv.place('acme', 1, { ...v1, revision: v1.bundle.revision });
      const headers = { authorization: `Bearer ${token}`, 'if-none-match': `"${v1.bundle.revision}"`, 'accept-encoding': 'identity' };
      await warm(token, 'acme', trio);
      expect((await ask(trio.probePort, latestOf('acme'), headers, { agent })).status).toBe(304);
      await trio.srv.place('acme', 2, { ...v2, revision: v2.bundle.revision });
      const news = await ask(trio.srv.port, latestOf('acme'), headers, { agent });
      expect(news.status).toBe(200);
      expect(news.body).toBe(v2.text);
      expect(news.headers).toContainEqual(['toolgate-version', '2']);
    } finally {
      agent.destroy();
      await trio.close();
    }
  });
});

describe('what a pull leaves behind', () => {
  it('counts and logs a 304 the listener answers as the app counts and logs its own', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const trio = await startTrio({ logger });
    try {
      await trio.srv.createTenant('acme');
      const token = await trio.srv.tokenFor('runtime', ['acme']);
      await trio.srv.place('acme', 2, { ...v2, revision: v2.bundle.revision });
      const headers = { authorization: `Bearer ${token}`, 'if-none-match': etag2 };
      await warm(token, 'acme', trio);
      const metric = async () => (await trio.srv.api('GET', '/metrics')).text;
      const series = (text: string, name: string) =>
        Number(new RegExp(`^${name}\\{method="GET",route="/v1/tenants/:tenant/bundles/latest"(?:,status="304")?\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      const counted = (before: string, after: string) =>
        ['toolgate_http_requests_total', 'toolgate_http_request_duration_seconds_count'].map((name) => series(after, name) - series(before, name));
      lines.length = 0;
      const beforeApp = await metric();
      for (let i = 0; i < 3; i++) await ask(trio.plainPort, latestOf('acme'), { ...headers, 'x-request-id': `app-${i}` });
      expect(counted(beforeApp, await metric())).toEqual([3, 3]);
      await warm(token, 'acme', trio);
      const beforeListener = await metric();
      for (let i = 0; i < 3; i++) expect((await ask(trio.probePort, latestOf('acme'), { ...headers, 'x-request-id': `listener-${i}` })).status).toBe(304);
      expect(counted(beforeListener, await metric())).toEqual([3, 3]);
      const logged = lines.filter((l) => l.msg === 'request' && String(l.requestId).match(/^(app|listener)-/));
      expect(logged).toHaveLength(6);
      const shape = (l: Record<string, unknown>) => ({
        ...l,
        requestId: String(l.requestId).replace(/^(app|listener)-/, ''),
        ms: typeof l.ms,
        time: typeof l.time,
        pid: typeof l.pid,
      });
      expect(logged.slice(3).map(shape)).toEqual(logged.slice(0, 3).map(shape));
      expect(logged[3]).toMatchObject({ method: 'GET', route: '/v1/tenants/:tenant/bundles/latest', path: latestOf('acme'), status: 304 });
    } finally {
      await trio.close();
    }
  });

  it('answers through the app when the shortcut fails, counting each failure and logging the first', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const srv = await startLiveServer({ logger });
    try {
      await srv.createTenant('acme');
      const token = await srv.tokenFor('runtime', ['acme']);
      await srv.place('acme', 2, { ...v2, revision: v2.bundle.revision });
      const headers = { authorization: `Bearer ${token}`, 'if-none-match': etag2 };
      expect((await ask(srv.port, latestOf('acme'), headers)).status).toBe(304);
      const faults = async () => Number(/^toolgate_listener_pull_faults_total (\d+)$/m.exec((await srv.api('GET', '/metrics')).text)?.[1] ?? Number.NaN);
      const answered = await answeredByListener(srv);
      expect(await faults()).toBe(0);
      // The bundle cache fails under the shortcut only: the app reads the bundle another way.
      const cache = srv.deps.bundles;
      cache.fresh = () => {
        throw new Error('cache fault for the test');
      };
      for (let i = 0; i < 3; i++) {
        const pull = await ask(srv.port, latestOf('acme'), { ...headers, 'x-request-id': `fault-${i}` });
        expect(pull.status).toBe(304);
        expect(pull.headers).toContainEqual(['etag', etag2]);
      }
      expect(await faults()).toBe(3);
      expect(await answeredByListener(srv)).toBe(answered);
      const said = lines.filter((l) => String(l.msg).includes('conditional-pull shortcut failed'));
      expect(said).toHaveLength(1);
      expect(lines.filter((l) => l.msg === 'request' && String(l.requestId).startsWith('fault-')).map((l) => l.status)).toEqual([304, 304, 304]);
    } finally {
      await srv.dispose();
    }
  });

  it('leaves a client the failure limiter holds back to the app, which answers 429', async () => {
    const trio = await startTrio({ settings: { authFailuresPerMinute: 2, trustedProxies: parseTrustedProxies('127.0.0.1') } });
    try {
      await trio.srv.createTenant('acme');
      const token = await trio.srv.tokenFor('runtime', ['acme']);
      await trio.srv.place('acme', 2, { ...v2, revision: v2.bundle.revision });
      const pull = (forwardedFor: string) => ({ authorization: `Bearer ${token}`, 'if-none-match': etag2, 'x-forwarded-for': forwardedFor, ...REQUEST_ID });
      for (let i = 0; i < 2; i++) {
        const wrong = await ask(trio.plainPort, latestOf('acme'), { authorization: 'Bearer tg_guess', 'x-forwarded-for': '198.51.100.7' });
        expect(wrong.status).toBe(401);
      }
      await warm(token, 'acme', trio);
      // The right token from the address that used up its allowance: refused like any other credential.
      expect((await ask(trio.probePort, latestOf('acme'), pull('198.51.100.7'))).status).toBe(LEFT);
      const limited = await ask(trio.srv.port, latestOf('acme'), pull('198.51.100.7'));
      expect(limited.status).toBe(429);
      expect(limited).toEqual(await ask(trio.plainPort, latestOf('acme'), pull('198.51.100.7')));
      // Another client behind the same proxy is not held back.
      await warm(token, 'acme', trio);
      expect((await ask(trio.probePort, latestOf('acme'), pull('198.51.100.8'))).status).toBe(304);
    } finally {
      await trio.close();
    }
  });
});

describe('which pulls the shortcut answered, as /metrics tells', () => {
  it('counts a conditional pull of the latest bundle answered 304 by the listener, and none the app answered', async () => {
    const created = await t.srv.api('POST', '/v1/tokens', { body: { label: 'revoked before its pull', role: 'runtime', tenants: ['acme'] } });
    expect(created.status).toBe(201);
    const revoked = created.json.token as string;
    await warm(revoked);
    expect((await t.srv.api('DELETE', `/v1/tokens/${created.json.id}`, { headers: { 'if-match': created.headers.get('etag') ?? '' } })).status).toBe(204);
    await warm(acme);
    await warm(globex, 'globex');
    const before = await answeredByListener(t.srv);
    expect(before).toBeGreaterThanOrEqual(0);

    const pull = await ask(t.srv.port, latestOf('acme'), { authorization: `Bearer ${acme}`, 'if-none-match': etag2 });
    expect(pull.status).toBe(304);
    expect(await answeredByListener(t.srv)).toBe(before + 1);

    // Each of these is answered by the app: a wrong tenant, a revoked token, a pinned version, an unconditional pull.
    const wrongTenant = await ask(t.srv.port, latestOf('acme'), { authorization: `Bearer ${globex}`, 'if-none-match': etag2 });
    expect(wrongTenant.status).toBe(404);
    const afterRevoke = await ask(t.srv.port, latestOf('acme'), { authorization: `Bearer ${revoked}`, 'if-none-match': etag2 });
    expect(afterRevoke.status).toBe(401);
    const pinned = await ask(t.srv.port, '/v1/tenants/acme/bundles/2', { authorization: `Bearer ${acme}`, 'if-none-match': etag2 });
    expect(pinned.status).toBe(304);
    const unconditional = await ask(t.srv.port, latestOf('acme'), { authorization: `Bearer ${acme}` });
    expect(unconditional.status).toBe(200);
    expect(await answeredByListener(t.srv)).toBe(before + 1);
  });
});
