import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptsGzip, parseIfNoneMatch, parseWait } from '../../server/distribution/serving.ts';
import { ADMIN_TOKEN, insertBundleInto, startLiveServer } from './live-server.ts';
import type { LiveServer } from './live-server.ts';
import { makeKey, makeSignedBundle } from './signed-bundles.ts';
import type { SignedBundle, TestKey } from './signed-bundles.ts';

const identity = { 'accept-encoding': 'identity' };
let srv: LiveServer;
let key: TestKey;
let acmeRuntime: string;
let globexRuntime: string;
let v1: SignedBundle;
let v2: SignedBundle;

beforeAll(async () => {
  key = await makeKey('k1');
  srv = await startLiveServer();
  await srv.createTenant('acme');
  await srv.createTenant('globex');
  await srv.createTenant('empty');
  acmeRuntime = await srv.tokenFor('runtime', ['acme']);
  globexRuntime = await srv.tokenFor('runtime', ['globex']);
  v1 = await makeSignedBundle({ tenant: 'acme', version: 1 }, key);
  v2 = await makeSignedBundle({ tenant: 'acme', version: 2, flavor: 'second', previousRevision: v1.bundle.revision }, key);
  await srv.place('acme', 1, { ...v1, revision: v1.bundle.revision });
  await srv.place('acme', 2, { ...v2, revision: v2.bundle.revision });
  const g = await makeSignedBundle({ tenant: 'globex', version: 1 }, key);
  await srv.place('globex', 1, { ...g, revision: g.bundle.revision });
});

afterAll(async () => {
  await srv?.dispose();
});

describe('GET /v1/tenants/:tenant/bundles/latest', () => {
  it('serves the exact signed bytes with ETag = revision, the signature and a revalidate-always cache policy', async () => {
    const r = await srv.api('GET', '/v1/tenants/acme/bundles/latest', { token: acmeRuntime, headers: identity });
    expect(r.status).toBe(200);
    expect(r.bytes.equals(Buffer.from(v2.text))).toBe(true);
    expect(r.headers.get('etag')).toBe(`"${v2.bundle.revision}"`);
    expect(r.headers.get('toolgate-signature')).toBe(v2.signature);
    expect(r.headers.get('toolgate-version')).toBe('2');
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('cache-control')).toBe('private, no-cache');
    expect(r.headers.get('vary')).toBe('Authorization, Accept-Encoding');
    expect(r.headers.get('content-encoding')).toBeNull();
  });

  it('sends the same bytes brotli-encoded, with a weak ETag, to a pull that weighs brotli at least as high as gzip', async () => {
    for (const accept of ['br;q=1, gzip;q=0.5', 'gzip, deflate, br']) {
      const raw = await rawGet(`/v1/tenants/acme/bundles/latest`, { authorization: `Bearer ${acmeRuntime}`, 'accept-encoding': accept });
      expect(raw.status).toBe(200);
      expect(raw.headers['content-encoding'], accept).toBe('br');
      expect(raw.headers.etag).toBe(`W/"${v2.bundle.revision}"`);
      expect(brotliDecompressSync(raw.body).equals(Buffer.from(v2.text))).toBe(true);
    }
    const pinned = await rawGet(`/v1/tenants/acme/bundles/1`, { authorization: `Bearer ${acmeRuntime}`, 'accept-encoding': 'br' });
    expect(pinned.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(pinned.body).equals(Buffer.from(v1.text))).toBe(true);
    const gzipFirst = await rawGet(`/v1/tenants/acme/bundles/latest`, { authorization: `Bearer ${acmeRuntime}`, 'accept-encoding': 'gzip, br;q=0.5' });
    expect(gzipFirst.headers['content-encoding']).toBe('gzip');
  });

  it('sends the same bytes gzip-encoded, with a weak ETag, to a pull that accepts gzip', async () => {
    const raw = await rawGet(`/v1/tenants/acme/bundles/latest`, { authorization: `Bearer ${acmeRuntime}`, 'accept-encoding': 'gzip, deflate' });
    expect(raw.status).toBe(200);
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(raw.headers.etag).toBe(`W/"${v2.bundle.revision}"`);
    expect(raw.body.length).toBeLessThan(Buffer.byteLength(v2.text));
    expect(gunzipSync(raw.body).equals(Buffer.from(v2.text))).toBe(true);
    const refused = await rawGet(`/v1/tenants/acme/bundles/latest`, { authorization: `Bearer ${acmeRuntime}`, 'accept-encoding': 'gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body.equals(Buffer.from(v2.text))).toBe(true);
    const again = await rawGet(`/v1/tenants/acme/bundles/latest`, {
      authorization: `Bearer ${acmeRuntime}`,
      'accept-encoding': 'gzip',
      'if-none-match': `W/"${v2.bundle.revision}"`,
    });
    expect(again.status).toBe(304);
  });

  it('answers 304 to an If-None-Match naming the latest revision, strong, weak or in a list, and to *', async () => {
    const etag = `"${v2.bundle.revision}"`;
    for (const inm of [etag, `W/${etag}`, `"sha256:0000", ${etag}`, '*']) {
      const r = await srv.api('GET', '/v1/tenants/acme/bundles/latest', { token: acmeRuntime, headers: { ...identity, 'if-none-match': inm } });
      expect(r.status, inm).toBe(304);
      expect(r.bytes.length).toBe(0);
      expect(r.headers.get('etag')).toBe(etag);
    }
  });

  it('answers 200 to a matching If-None-Match when the client says it holds an older version of the same content', async () => {
    const etag = `"${v2.bundle.revision}"`;
    const older = await srv.api('GET', '/v1/tenants/acme/bundles/latest', { token: acmeRuntime, headers: { 'if-none-match': etag, 'toolgate-version': '1' } });
    expect(older.status).toBe(200);
    const same = await srv.api('GET', '/v1/tenants/acme/bundles/latest', { token: acmeRuntime, headers: { 'if-none-match': etag, 'toolgate-version': '2' } });
    expect(same.status).toBe(304);
    expect(same.headers.get('toolgate-version')).toBe('2');
  });

  it('answers 200 to an If-None-Match naming an older revision', async () => {
    const r = await srv.api('GET', '/v1/tenants/acme/bundles/latest', { token: acmeRuntime, headers: { 'if-none-match': `"${v1.bundle.revision}"` } });
    expect(r.status).toBe(200);
    expect(r.headers.get('toolgate-version')).toBe('2');
  });

  it('404s for a tenant with no bundle yet and for a tenant that does not exist', async () => {
    const empty = await srv.api('GET', '/v1/tenants/empty/bundles/latest');
    expect(empty.status).toBe(404);
    expect(empty.json.code).toBe('not_found');
    const none = await srv.api('GET', '/v1/tenants/nope/bundles/latest');
    expect(none.status).toBe(404);
  });

  it('lets a runtime token pull only its own tenant: another tenant looks exactly like one that does not exist', async () => {
    const other = await srv.api('GET', '/v1/tenants/globex/bundles/latest', { token: acmeRuntime });
    const missing = await srv.api('GET', '/v1/tenants/zzzzzz/bundles/latest', { token: acmeRuntime });
    expect(other.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(other.headers.get('toolgate-signature')).toBeNull();
    expect(other.json.code).toBe(missing.json.code);
    expect(other.json.detail.replace('globex', 'X')).toBe(missing.json.detail.replace('zzzzzz', 'X'));
    expect((await srv.api('GET', '/v1/tenants/globex/bundles/1', { token: acmeRuntime })).status).toBe(404);
    expect((await srv.api('GET', '/v1/tenants/globex/bundles/1/signature', { token: acmeRuntime })).status).toBe(404);
    expect((await srv.api('GET', '/v1/tenants/globex/bundles/latest', { token: globexRuntime })).status).toBe(200);
  });

  it('refuses pulls without a valid token', async () => {
    expect((await srv.api('GET', '/v1/tenants/acme/bundles/latest', { token: null })).status).toBe(401);
    expect((await srv.api('GET', '/v1/tenants/acme/bundles/latest', { token: 'tg_not_a_token' })).status).toBe(401);
  });

  it('rejects a wait that is not a whole number of seconds', async () => {
    for (const w of ['-1', 'abc', '1.5']) {
      const r = await srv.api('GET', `/v1/tenants/acme/bundles/latest?wait=${w}`, { token: acmeRuntime });
      expect(r.status, w).toBe(400);
      expect(r.json.code).toBe('validation');
    }
  });

  it('long-polls: with nothing newer it answers 304 when the wait runs out', async () => {
    const r = await srv.api('GET', '/v1/tenants/acme/bundles/latest?wait=1', { token: acmeRuntime, headers: { 'if-none-match': `"${v2.bundle.revision}"` } });
    expect(r.status).toBe(304);
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  it('long-polls: a publish answers every waiting pull with the new bundle', async () => {
    await srv.createTenant('poll');
    const p1 = await makeSignedBundle({ tenant: 'poll', version: 1 }, key);
    await srv.place('poll', 1, { ...p1, revision: p1.bundle.revision });
    const inm = { 'if-none-match': `"${p1.bundle.revision}"` };
    const pulls = Array.from({ length: 20 }, () => srv.api('GET', '/v1/tenants/poll/bundles/latest?wait=30', { headers: inm }));
    const cache = srv.deps.bundles;
    await until(() => cache.waiting('poll') === 20);
    const p2 = await makeSignedBundle({ tenant: 'poll', version: 2, flavor: 'b' }, key);
    await srv.place('poll', 2, { ...p2, revision: p2.bundle.revision });
    const answers = await Promise.all(pulls);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.bytes.equals(Buffer.from(p2.text))).toBe(true);
    }
    expect(cache.waiting('poll')).toBe(0);
  });

  it('releases a waiting pull when its client goes away', async () => {
    await srv.createTenant('gone');
    const ac = new AbortController();
    const pull = fetch(`${srv.url}/v1/tenants/gone/bundles/latest?wait=30`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: ac.signal }).catch(
      () => 'aborted',
    );
    const cache = srv.deps.bundles;
    await until(() => cache.waiting('gone') === 1);
    ac.abort();
    expect(await pull).toBe('aborted');
    await until(() => cache.waiting('gone') === 0);
  });

  it('long-polls: a publish committed by another process on the same database reaches waiting pulls', async () => {
    await srv.createTenant('elsewhere');
    const e1 = await makeSignedBundle({ tenant: 'elsewhere', version: 1 }, key);
    await srv.place('elsewhere', 1, { ...e1, revision: e1.bundle.revision });
    const pull = srv.api('GET', '/v1/tenants/elsewhere/bundles/latest?wait=30', { headers: { 'if-none-match': `"${e1.bundle.revision}"` } });
    const cache = srv.deps.bundles;
    await until(() => cache.waiting('elsewhere') === 1);
    const e2 = await makeSignedBundle({ tenant: 'elsewhere', version: 2, flavor: 'other process' }, key);
    // A second connection to the database file and no publish event: what another server process would do.
    await insertBundleInto(srv.dir, 'elsewhere', 2, { ...e2, revision: e2.bundle.revision });
    const r = await pull;
    expect(r.status).toBe(200);
    expect(r.headers.get('toolgate-version')).toBe('2');
  });

  it('long-polls for the first bundle of a tenant that has none yet', async () => {
    await srv.createTenant('first');
    const pull = srv.api('GET', '/v1/tenants/first/bundles/latest?wait=30');
    const cache = srv.deps.bundles;
    await until(() => cache.waiting('first') === 1);
    const f1 = await makeSignedBundle({ tenant: 'first', version: 1 }, key);
    await srv.place('first', 1, { ...f1, revision: f1.bundle.revision });
    const r = await pull;
    expect(r.status).toBe(200);
    expect(r.headers.get('toolgate-version')).toBe('1');
  });
});

describe('GET /v1/tenants/:tenant/bundles/:version', () => {
  it('serves a pinned version as immutable, with 304 on a matching If-None-Match', async () => {
    const r = await srv.api('GET', '/v1/tenants/acme/bundles/1', { token: acmeRuntime, headers: identity });
    expect(r.status).toBe(200);
    expect(r.text).toBe(v1.text);
    expect(r.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    expect(r.headers.get('etag')).toBe(`"${v1.bundle.revision}"`);
    const again = await srv.api('GET', '/v1/tenants/acme/bundles/1', { token: acmeRuntime, headers: { 'if-none-match': `"${v1.bundle.revision}"` } });
    expect(again.status).toBe(304);
  });

  it('serves the signature alone as text', async () => {
    const r = await srv.api('GET', '/v1/tenants/acme/bundles/2/signature', { token: acmeRuntime });
    expect(r.status).toBe(200);
    expect(r.text.trim()).toBe(v2.signature);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('404s for a version that does not exist or is not a number', async () => {
    expect((await srv.api('GET', '/v1/tenants/acme/bundles/99', { token: acmeRuntime })).status).toBe(404);
    expect((await srv.api('GET', '/v1/tenants/acme/bundles/99/signature', { token: acmeRuntime })).status).toBe(404);
    expect((await srv.api('GET', '/v1/tenants/acme/bundles/x1', { token: acmeRuntime })).status).toBe(404);
  });
});

describe('runtime status', () => {
  it('records a runtime report without an audit event and lists it with how far behind it is', async () => {
    const before = await srv.api('GET', '/v1/audit');
    const report = {
      runtimeId: 'worker-a',
      version: 1,
      revision: v1.bundle.revision,
      health: 'stale',
      lastError: 'unreachable',
      detail: 'connect ECONNREFUSED',
    };
    const r = await srv.api('POST', '/v1/tenants/acme/runtimes/status', { token: acmeRuntime, body: report });
    expect(r.status).toBe(204);
    const again = await srv.api('POST', '/v1/tenants/acme/runtimes/status', {
      token: acmeRuntime,
      body: { runtimeId: 'worker-b', version: 2, health: 'fresh' },
    });
    expect(again.status).toBe(204);
    const list = await srv.api('GET', '/v1/tenants/acme/runtimes');
    expect(list.status).toBe(200);
    expect(list.json.latest).toEqual({ version: 2, revision: v2.bundle.revision });
    const byId = Object.fromEntries(list.json.runtimes.map((x: { runtimeId: string }) => [x.runtimeId, x]));
    expect(byId['worker-a']).toMatchObject({
      tenant: 'acme',
      version: 1,
      health: 'stale',
      lastError: 'unreachable',
      detail: 'connect ECONNREFUSED',
      behind: 1,
    });
    expect(byId['worker-b']).toMatchObject({ version: 2, health: 'fresh', lastError: null, behind: 0 });
    expect(Date.parse(byId['worker-a'].reportedAt)).not.toBeNaN();
    const after = await srv.api('GET', '/v1/audit');
    expect(after.text).toBe(before.text);
  });

  it("replaces a runtime's previous report", async () => {
    await srv.api('POST', '/v1/tenants/acme/runtimes/status', {
      token: acmeRuntime,
      body: { runtimeId: 'worker-c', version: null, health: 'none', lastError: 'bad_signature' },
    });
    await srv.api('POST', '/v1/tenants/acme/runtimes/status', { token: acmeRuntime, body: { runtimeId: 'worker-c', version: 2, health: 'fresh' } });
    const list = await srv.api('GET', '/v1/tenants/acme/runtimes');
    const rows = list.json.runtimes.filter((x: { runtimeId: string }) => x.runtimeId === 'worker-c');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ version: 2, health: 'fresh', lastError: null });
  });

  it('rejects a report that does not match the schema, naming each field', async () => {
    const r = await srv.api('POST', '/v1/tenants/acme/runtimes/status', {
      token: acmeRuntime,
      body: { runtimeId: '', version: 0, health: 'great', lastError: 'oops', extra: 1 },
    });
    expect(r.status).toBe(400);
    const pointers = r.json.errors.map((e: { pointer: string }) => e.pointer);
    for (const p of ['/runtimeId', '/version', '/health', '/lastError', '/extra']) expect(pointers).toContain(p);
  });

  it('lets a runtime token report only for its own tenant and not read the fleet', async () => {
    const body = { runtimeId: 'spy', version: 1, health: 'fresh' };
    expect((await srv.api('POST', '/v1/tenants/globex/runtimes/status', { token: acmeRuntime, body })).status).toBe(404);
    expect((await srv.api('GET', '/v1/tenants/acme/runtimes', { token: acmeRuntime })).status).toBe(403);
    const globex = await srv.api('GET', '/v1/tenants/globex/runtimes');
    expect(globex.json.runtimes.some((x: { runtimeId: string }) => x.runtimeId === 'spy')).toBe(false);
  });
});

describe('header parsing', () => {
  it('accepts gzip only when Accept-Encoding names it with a q above 0', () => {
    expect(acceptsGzip('gzip, deflate, br')).toBe(true);
    expect(acceptsGzip('deflate, GZIP;q=0.3')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('x-gzip, br')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });

  it('reads If-None-Match lists, weak tags and *', () => {
    expect([...parseIfNoneMatch('"a", W/"b" ,"c"').etags]).toEqual(['"a"', '"b"', '"c"']);
    expect(parseIfNoneMatch(' * ').any).toBe(true);
    expect(parseIfNoneMatch(undefined).etags.size).toBe(0);
    expect(parseIfNoneMatch('garbage').etags.size).toBe(0);
  });

  it('caps wait at 60 seconds and refuses anything but whole seconds', () => {
    expect(parseWait(undefined)).toBe(0);
    expect(parseWait('5')).toBe(5);
    expect(parseWait('3600')).toBe(60);
    expect(parseWait('-1')).toBeUndefined();
    expect(parseWait('1e3')).toBeUndefined();
  });
});

function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(srv.url + path, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
