import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeStatus } from '../../policy-schemas/types.gen.ts';
import { jwksOf, makeBundle, makeKey, makeSignedBundle, signDocument } from '../../test/distribution/signed-bundles.ts';
import type { SignedBundle, TestKey } from '../../test/distribution/signed-bundles.ts';
import { createBundleClient } from './bundle-client.ts';
import type { BundleClient, BundleClientOptions } from './bundle-client.ts';

const tenant = 'acme';
let key: TestKey;
let stranger: TestKey;
const open: BundleClient[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  key = await makeKey('k1');
  stranger = await makeKey('k-stranger');
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** An in-process stand-in for the server: serves `latest` with short long-polls and records reports. */
function fakeServer() {
  const s = {
    latest: undefined as SignedBundle | undefined,
    /** Pinned versions served at …/bundles/:version. */
    versions: new Map<number, SignedBundle>(),
    signatureOverride: undefined as string | undefined,
    down: false,
    /** Accept connections and never answer (until the client gives up), like a black-holed server. */
    hang: false,
    reportDelayMs: 0,
    pulls: [] as { url: string; ifNoneMatch: string | null; authorization: string | null }[],
    reports: [] as RuntimeStatus[],
  };
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    const headers = new Headers(init?.headers);
    const signal = init?.signal ?? undefined;
    if (s.down) throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
    if (s.hang && init?.method !== 'POST') {
      return new Promise<Response>((_, reject) => {
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    if (init?.method === 'POST') {
      if (s.reportDelayMs) await new Promise((r) => setTimeout(r, s.reportDelayMs));
      s.reports.push(JSON.parse(String(init.body)));
      return new Response(null, { status: 204 });
    }
    const ifNoneMatch = headers.get('if-none-match');
    s.pulls.push({ url, ifNoneMatch, authorization: headers.get('authorization') });
    const pinned = /\/bundles\/(\d+)$/.exec(new URL(url).pathname);
    if (pinned) {
      const b = s.versions.get(Number(pinned[1]));
      if (!b) return new Response('{"code":"not_found"}', { status: 404 });
      return new Response(b.text, { status: 200, headers: { etag: `"${b.bundle.revision}"`, 'toolgate-signature': b.signature } });
    }
    const deadline = Date.now() + (new URL(url).searchParams.get('wait') ? 100 : 0);
    const unchanged = () => !s.latest || (ifNoneMatch ?? '').includes(`"${s.latest.bundle.revision}"`);
    while (unchanged() && Date.now() < deadline) {
      if (signal?.aborted) throw signal.reason;
      await new Promise((r) => setTimeout(r, 10));
      if (s.down) throw new TypeError('fetch failed');
    }
    if (!s.latest) return new Response('{"code":"not_found"}', { status: 404 });
    const etag = `"${s.latest.bundle.revision}"`;
    if (unchanged()) return new Response(null, { status: 304, headers: { etag, 'toolgate-version': String(s.latest.bundle.version) } });
    return new Response(s.latest.text, { status: 200, headers: { etag, 'toolgate-signature': s.signatureOverride ?? s.latest.signature } });
  }) as typeof fetch;
  return { s, fetchFn };
}

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'toolgate-client-'));
  dirs.push(d);
  return d;
}

async function start(fetchFn: typeof fetch, cacheDir: string, extra: Partial<BundleClientOptions> = {}): Promise<BundleClient> {
  const c = await createBundleClient({
    url: 'http://toolgate.test/',
    tenant,
    token: 'rt-secret',
    trustedKeys: jwksOf(key),
    cacheDir,
    runtimeId: 'unit-1',
    fetch: fetchFn,
    waitSeconds: 1,
    backoff: { initialMs: 5, maxMs: 40 },
    statusIntervalMs: 0,
    ...extra,
  });
  open.push(c);
  return c;
}

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('createBundleClient', () => {
  it('denies every call and reports none while it has never held a good bundle', async () => {
    const { s, fetchFn } = fakeServer();
    s.down = true;
    const c = await start(fetchFn, await tempDir());
    await until('an unreachable status', () => c.status().lastError === 'unreachable');
    expect(c.status().health).toBe('none');
    expect(c.current()).toBeUndefined();
    expect(c.evaluate({ subject: 'agent:support-bot' }).tools).toEqual([]);
    const d = c.decide({ subject: 'agent:support-bot' }, { toolCallId: 'call-1', name: 'core__tool-0001', arguments: '{"query":"x"}' });
    expect(d).toMatchObject({ toolCallId: 'call-1', decision: 'deny', errorCode: 'policy_denied' });
  });

  it('accepts a verified bundle, evaluates and decides with it, and reports fresh to the server', async () => {
    const { s, fetchFn } = fakeServer();
    s.latest = await makeSignedBundle({ tenant, version: 1 }, key);
    const c = await start(fetchFn, await tempDir());
    await until('version 1', () => c.status().version === 1 && c.status().health === 'fresh');
    expect(c.evaluate({ subject: 'agent:support-bot' }).tools.map((t) => t.id)).toEqual(['core__tool-0001', 'core__tool-0002']);
    const view = c.view({ subject: 'agent:support-bot' })!;
    expect(c.decide(view, { name: 'core__tool-0001', arguments: '{"query":"docs"}' }).decision).toBe('allow');
    expect(c.decide(view, { name: 'core__tool-0002', arguments: '{"query":"docs"}' }).decision).toBe('require_approval');
    expect(c.decide(view, { name: 'core__tool-0000', arguments: '{"query":"docs"}' }).errorCode).toBe('policy_denied');
    expect(c.decide(view, { name: 'core__tool-0001', arguments: '{"quer' }).errorCode).toBe('invalid_json');
    await until('a fresh report', () => s.reports.some((r) => r.health === 'fresh' && r.version === 1));
    expect(s.reports.at(-1)).toMatchObject({ runtimeId: 'unit-1', version: 1, revision: s.latest.bundle.revision, health: 'fresh' });
    expect(s.pulls[0].authorization).toBe('Bearer rt-secret');
  });

  it('long-polls with If-None-Match naming the revision it holds and follows a new version', async () => {
    const { s, fetchFn } = fakeServer();
    s.latest = await makeSignedBundle({ tenant, version: 1 }, key);
    const c = await start(fetchFn, await tempDir());
    await until('version 1', () => c.status().version === 1);
    const updates: number[] = [];
    c.on('update', (b) => updates.push(b.bundle.version));
    const v2 = await makeSignedBundle({ tenant, version: 2, flavor: 'two', previousRevision: s.latest.bundle.revision }, key);
    const held = `"${s.latest.bundle.revision}"`;
    await until('a conditional long-poll', () => s.pulls.some((p) => p.ifNoneMatch === held && p.url.includes('wait=1')));
    s.latest = v2;
    await until('version 2', () => c.status().version === 2);
    expect(updates).toEqual([2]);
  });

  it('keeps the last good bundle and reports stale with the reason when the server sends a bad one', async () => {
    const { s, fetchFn } = fakeServer();
    s.latest = await makeSignedBundle({ tenant, version: 1 }, key);
    const c = await start(fetchFn, await tempDir());
    await until('version 1', () => c.status().version === 1);
    const refusals: string[] = [];
    c.on('refused', (r) => refusals.push(r.code));
    s.latest = await makeSignedBundle({ tenant, version: 2, flavor: 'evil' }, stranger);
    await until('a refusal', () => c.status().lastError === 'unknown_kid');
    expect(c.status()).toMatchObject({ health: 'stale', version: 1 });
    expect(c.current()?.bundle.version).toBe(1);
    expect(refusals).toContain('unknown_kid');
    await until('a stale report', () => s.reports.some((r) => r.health === 'stale' && r.lastError === 'unknown_kid'));
    // The refused revision is named in If-None-Match, so the server can hold the pull until something else is published.
    const refused = `"${s.latest.bundle.revision}"`;
    await until('a pull naming the refused revision', () => s.pulls.some((p) => p.ifNoneMatch?.includes(refused) ?? false));
    s.latest = await makeSignedBundle({ tenant, version: 3, flavor: 'good again' }, key);
    await until('version 3', () => c.status().version === 3 && c.status().health === 'fresh');
    expect(c.status().lastError).toBeNull();
  });

  it('fetches the pinned version when a 304 says the same content was re-issued as a newer version', async () => {
    const { s, fetchFn } = fakeServer();
    const v1 = await makeSignedBundle({ tenant, version: 1 }, key);
    s.latest = v1;
    const c = await start(fetchFn, await tempDir());
    await until('version 1', () => c.status().version === 1);
    const reissued = await signDocument({ ...makeBundle({ tenant, version: 4 }), revision: v1.bundle.revision }, key);
    expect(reissued.bundle.revision).toBe(v1.bundle.revision);
    s.versions.set(4, reissued);
    s.latest = reissued;
    await until('version 4', () => c.status().version === 4 && c.status().health === 'fresh');
    expect(s.pulls.some((p) => p.url.endsWith('/bundles/4'))).toBe(true);
  });

  it('refuses a lower version than it has accepted (rollback) and keeps its bundle', async () => {
    const { s, fetchFn } = fakeServer();
    s.latest = await makeSignedBundle({ tenant, version: 5 }, key);
    const c = await start(fetchFn, await tempDir());
    await until('version 5', () => c.status().version === 5);
    s.latest = await makeSignedBundle({ tenant, version: 4, flavor: 'older' }, key);
    await until('a rollback refusal', () => c.status().lastError === 'rollback');
    expect(c.status()).toMatchObject({ health: 'stale', version: 5, highestVersionSeen: 5 });
  });

  it('refuses a bundle whose signature header is missing as malformed', async () => {
    const { s, fetchFn } = fakeServer();
    s.latest = await makeSignedBundle({ tenant, version: 1 }, key);
    s.signatureOverride = '';
    const c = await start(fetchFn, await tempDir());
    await until('a refusal', () => c.status().lastError === 'malformed');
    expect(c.status().health).toBe('none');
  });

  it('persists the exact signed bytes and starts from them, stale, when the server is unreachable', async () => {
    const dir = await tempDir();
    const first = fakeServer();
    first.s.latest = await makeSignedBundle({ tenant, version: 2 }, key);
    const a = await start(first.fetchFn, dir);
    await until('version 2', () => a.status().version === 2);
    await a.close();
    expect(await readFile(join(dir, `${tenant}.v2.bundle.json`), 'utf8')).toBe(first.s.latest.text);
    expect((await readFile(join(dir, `${tenant}.v2.bundle.jws`), 'utf8')).trim()).toBe(first.s.latest.signature);
    expect((await readdir(dir)).some((f) => f.endsWith('.tmp'))).toBe(false);

    const down = fakeServer();
    down.s.down = true;
    const b = await start(down.fetchFn, dir);
    expect(b.current()?.bundle.version).toBe(2);
    expect(b.status().health).toBe('stale');
    expect(b.evaluate({ subject: 'agent:support-bot' }).tools.length).toBe(2);
    await until('an unreachable status', () => b.status().lastError === 'unreachable');
    expect(b.status().health).toBe('stale');
  });

  it('replaces the cached bundle on a new version and removes the old files', async () => {
    const dir = await tempDir();
    const { s, fetchFn } = fakeServer();
    s.latest = await makeSignedBundle({ tenant, version: 1 }, key);
    const c = await start(fetchFn, dir);
    await until('version 1', () => c.status().version === 1);
    s.latest = await makeSignedBundle({ tenant, version: 2, flavor: 'b' }, key);
    await until('version 2', () => c.status().version === 2);
    await until('the old files removed', () => !existsSync(join(dir, `${tenant}.v1.bundle.json`)));
    const state = JSON.parse(await readFile(join(dir, `${tenant}.state.json`), 'utf8'));
    expect(state).toMatchObject({ tenant, version: 2, highestVersionSeen: 2 });
  });

  it('refuses a cache file edited on disk at start, holds nothing and denies every call', async () => {
    const dir = await tempDir();
    const first = fakeServer();
    first.s.latest = await makeSignedBundle({ tenant, version: 1 }, key);
    const a = await start(first.fetchFn, dir);
    await until('version 1', () => a.status().version === 1);
    await a.close();
    const file = join(dir, `${tenant}.v1.bundle.json`);
    await writeFile(file, (await readFile(file, 'utf8')).replace('"deny":["core__tool-0000"]', '"deny":[]'));

    const down = fakeServer();
    down.s.hang = true;
    const b = await start(down.fetchFn, dir);
    expect(b.current()).toBeUndefined();
    expect(b.status()).toMatchObject({ health: 'none', lastError: 'bad_signature' });
    expect(b.decide({ subject: 'agent:support-bot' }, { name: 'core__tool-0000', arguments: {} }).decision).toBe('deny');
  });

  it('refuses a cached bundle below the highest version recorded beside it (rollback on disk)', async () => {
    const dir = await tempDir();
    const first = fakeServer();
    first.s.latest = await makeSignedBundle({ tenant, version: 3 }, key);
    const a = await start(first.fetchFn, dir);
    await until('version 3', () => a.status().version === 3);
    await a.close();
    const stateFile = join(dir, `${tenant}.state.json`);
    const state = JSON.parse(await readFile(stateFile, 'utf8'));
    await writeFile(stateFile, JSON.stringify({ ...state, highestVersionSeen: 7 }));

    const down = fakeServer();
    down.s.hang = true;
    const b = await start(down.fetchFn, dir);
    expect(b.status()).toMatchObject({ health: 'none', lastError: 'rollback', highestVersionSeen: 7 });
  });

  it('treats an unreadable cache state as malformed and still pulls from the server', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, `${tenant}.state.json`), '{ not json');
    const { s, fetchFn } = fakeServer();
    s.latest = await makeSignedBundle({ tenant, version: 1 }, key);
    const c = await start(fetchFn, dir);
    await until('version 1', () => c.status().version === 1 && c.status().health === 'fresh');
  });

  it('goes stale when the server goes away and fresh again when it answers', async () => {
    const { s, fetchFn } = fakeServer();
    s.latest = await makeSignedBundle({ tenant, version: 1 }, key);
    const c = await start(fetchFn, await tempDir());
    await until('fresh', () => c.status().health === 'fresh');
    s.down = true;
    await until('stale', () => c.status().health === 'stale');
    expect(c.status().lastError).toBe('unreachable');
    expect(c.current()?.bundle.version).toBe(1);
    s.down = false;
    await until('fresh again', () => c.status().health === 'fresh');
  });

  it('asks without waiting right after start and after losing the server, and long-polls otherwise', async () => {
    const { s, fetchFn } = fakeServer();
    s.latest = await makeSignedBundle({ tenant, version: 1 }, key);
    const c = await start(fetchFn, await tempDir());
    await until('version 1', () => c.status().version === 1);
    await until('a long-poll', () => s.pulls.some((p) => p.url.endsWith('wait=1')));
    expect(s.pulls[0].url).toMatch(/wait=0$/);
    s.down = true;
    await until('stale', () => c.status().health === 'stale');
    const before = s.pulls.length;
    s.down = false;
    await until('fresh again', () => c.status().health === 'fresh');
    expect(s.pulls[before].url).toMatch(/wait=0$/);
  });

  it('delivers its last status before close() returns, even while an earlier report is in flight', async () => {
    const { s, fetchFn } = fakeServer();
    s.reportDelayMs = 150;
    s.latest = await makeSignedBundle({ tenant, version: 1 }, key);
    const c = await start(fetchFn, await tempDir());
    await until('version 1', () => c.status().version === 1);
    await c.close();
    expect(s.reports.at(-1)).toMatchObject({ version: 1, health: 'fresh' });
  });

  it('backs off on server errors instead of retrying in a tight loop', async () => {
    let calls = 0;
    const fetchFn = (async (_input: string | URL | Request, init?: RequestInit) => {
      if (init?.method !== 'POST') calls++;
      return new Response('{}', { status: 503 });
    }) as typeof fetch;
    const c = await start(fetchFn, await tempDir(), { backoff: { initialMs: 50, maxMs: 400 } });
    await until('a server_error status', () => c.status().lastError === 'server_error');
    await new Promise((r) => setTimeout(r, 300));
    // Waits of at least 25, 50, 100, 200 ms: five attempts fit in 300 ms, a tight loop would make hundreds.
    expect(calls).toBeLessThan(8);
  });

  it('maps 401/403 to unauthorized and 404 to not_found', async () => {
    for (const [status, code] of [
      [401, 'unauthorized'],
      [403, 'unauthorized'],
      [404, 'not_found'],
    ] as const) {
      const fetchFn = (async () => new Response('{}', { status })) as unknown as typeof fetch;
      const c = await start(fetchFn, await tempDir());
      await until(code, () => c.status().lastError === code);
      await c.close();
    }
  });

  it('refuses a bundle signed for another tenant with tenant_mismatch', async () => {
    const { s, fetchFn } = fakeServer();
    s.latest = await makeSignedBundle({ tenant: 'globex', version: 1 }, key);
    const c = await start(fetchFn, await tempDir());
    await until('a refusal', () => c.status().lastError === 'tenant_mismatch');
    expect(c.current()).toBeUndefined();
  });
});
