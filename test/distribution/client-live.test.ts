import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { createBundleClient } from '../../runtime/client/index.ts';
import type { BundleClient, BundleClientOptions } from '../../runtime/client/index.ts';
import { insertBundleInto, startLiveServer } from './live-server.ts';
import type { LiveServer } from './live-server.ts';
import { jwksOf, makeBundle, makeKey, makeSignedBundle, revisionOf, signBytes, signDocument } from './signed-bundles.ts';
import type { SignedBundle, TestKey } from './signed-bundles.ts';

let key: TestKey;
let stranger: TestKey;
const clients: BundleClient[] = [];
const servers: LiveServer[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  key = await makeKey('k1');
  stranger = await makeKey('k-stranger');
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  for (const s of servers) await s.dispose();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function server(): Promise<LiveServer> {
  const s = await startLiveServer();
  servers.push(s);
  return s;
}

async function client(srv: { url: string }, token: string, extra: Partial<BundleClientOptions> = {}): Promise<BundleClient> {
  const cacheDir = extra.cacheDir ?? (await mkdtemp(join(tmpdir(), 'toolgate-live-client-')));
  dirs.push(cacheDir);
  const c = await createBundleClient({
    url: srv.url,
    tenant: 'acme',
    token,
    trustedKeys: jwksOf(key),
    cacheDir,
    waitSeconds: 5,
    backoff: { initialMs: 20, maxMs: 200 },
    statusIntervalMs: 0,
    ...extra,
  });
  clients.push(c);
  return c;
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const place = (srv: LiveServer, version: number, s: SignedBundle, tenant = 'acme') => srv.place(tenant, version, { ...s, revision: s.bundle.revision });

describe('bundle client against a live server', () => {
  it('refuses each kind of bad bundle with its own reason, keeps the last good one, and recovers on a good publish', async () => {
    const srv = await server();
    await srv.createTenant('acme');
    const token = await srv.tokenFor('runtime', ['acme']);
    await place(srv, 3, await makeSignedBundle({ tenant: 'acme', version: 3 }, key));
    const c = await client(srv, token);
    await until('version 3', () => c.status().version === 3 && c.status().health === 'fresh');
    const refused: string[] = [];
    c.on('refused', (r) => refused.push(r.code));

    const good = (version: number, flavor: string) => makeSignedBundle({ tenant: 'acme', version, flavor }, key);
    const tampered = await good(4, 'tampered');
    const revisionEdited = makeBundle({ tenant: 'acme', version: 9, flavor: 'revision' });
    revisionEdited.policy.bindings!['agent:intruder'] = ['analyst'];
    const conformanceEdited = makeBundle({ tenant: 'acme', version: 10, flavor: 'conformance' });
    conformanceEdited.conformance[0].expect = { ...conformanceEdited.conformance[0].expect, roles: ['admin'] };
    conformanceEdited.revision = revisionOf(conformanceEdited);
    const notABundle = canonicalJson({ format: 'toolgate.bundle/v1', tenant: 'acme', version: 11 });
    const cases: [number, string, Pick<SignedBundle, 'text' | 'signature'> & { revision: string }][] = [
      [4, 'bad_signature', { text: tampered.text.replace('tampered', 'tampere!'), signature: tampered.signature, revision: tampered.bundle.revision }],
      [5, 'unknown_kid', withRevision(await makeSignedBundle({ tenant: 'acme', version: 5, flavor: 'stranger' }, stranger))],
      [6, 'tenant_mismatch', withRevision(await makeSignedBundle({ tenant: 'globex', version: 6, flavor: 'globex' }, key))],
      [7, 'rollback', withRevision(await good(2, 'older'))],
      [
        8,
        'expired',
        withRevision(
          await makeSignedBundle(
            { tenant: 'acme', version: 8, flavor: 'old', issuedAt: '2021-01-01T00:00:00.000Z', expiresAt: '2021-01-02T00:00:00.000Z' },
            key,
          ),
        ),
      ],
      [9, 'revision_mismatch', withRevision(await signDocument(revisionEdited, key))],
      [10, 'conformance_failed', withRevision(await signDocument(conformanceEdited, key))],
      [11, 'malformed', { text: notABundle, signature: await signBytes(notABundle, key), revision: `sha256:${'b'.repeat(64)}` }],
    ];
    for (const [version, code, bundle] of cases) {
      await srv.place('acme', version, bundle);
      await until(`a ${code} refusal`, () => c.status().lastError === code);
      expect(c.status(), code).toMatchObject({ health: 'stale', version: 3 });
      expect(c.evaluate({ subject: 'agent:support-bot' }).tools.length).toBe(2);
    }
    expect(refused).toEqual(cases.map(([, code]) => code));
    await place(srv, 12, await good(12, 'fixed'));
    await until('version 12', () => c.status().version === 12 && c.status().health === 'fresh');
    expect(c.status().lastError).toBeNull();
  });

  it('does not download a refused bundle again while nothing newer is published', async () => {
    const srv = await server();
    await srv.createTenant('acme');
    const token = await srv.tokenFor('runtime', ['acme']);
    await place(srv, 1, await makeSignedBundle({ tenant: 'acme', version: 1 }, key));
    const latestAnswers: number[] = [];
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (String(input).includes('/bundles/latest')) latestAnswers.push(res.status);
      return res;
    };
    const c = await client(srv, token, { fetch: recording, waitSeconds: 1 });
    await until('version 1', () => c.status().version === 1 && c.status().health === 'fresh');
    const refused: string[] = [];
    c.on('refused', (r) => refused.push(r.code));
    await srv.place('acme', 2, withRevision(await makeSignedBundle({ tenant: 'acme', version: 2, flavor: 'stranger' }, stranger)));
    await until('the refusal', () => refused.length === 1);
    const afterRefusal = latestAnswers.length;
    await until('three more pulls', () => latestAnswers.length >= afterRefusal + 3);
    // Each later pull names the refused bundle, so the server holds it and answers 304, never the bytes again.
    expect(latestAnswers.slice(afterRefusal)).not.toContain(200);
    expect(refused).toEqual(['unknown_kid']);
    expect(c.status()).toMatchObject({ health: 'stale', version: 1, lastError: 'unknown_kid' });
    await place(srv, 3, await makeSignedBundle({ tenant: 'acme', version: 3, flavor: 'good again' }, key));
    await until('version 3', () => c.status().version === 3 && c.status().health === 'fresh');
  });

  it('delivers a publish to every long-polling client, and each reports the version it runs', async () => {
    const srv = await server();
    await srv.createTenant('acme');
    const token = await srv.tokenFor('runtime', ['acme']);
    const v1 = await makeSignedBundle({ tenant: 'acme', version: 1 }, key);
    await place(srv, 1, v1);
    const fleet = await Promise.all(Array.from({ length: 8 }, (_, i) => client(srv, token, { runtimeId: `fleet-${i}`, waitSeconds: 30 })));
    await until('all on version 1', () => fleet.every((c) => c.status().version === 1));
    const cache = srv.deps.bundles;
    await until('all waiting', () => cache.waiting('acme') === fleet.length);
    const updates: number[] = [];
    for (const c of fleet) c.on('update', (b) => updates.push(b.bundle.version));
    await place(srv, 2, await makeSignedBundle({ tenant: 'acme', version: 2, flavor: 'two', previousRevision: v1.bundle.revision }, key));
    await until('all on version 2', () => fleet.every((c) => c.status().version === 2 && c.status().health === 'fresh'));
    expect(updates).toEqual(fleet.map(() => 2));
    let listed: { runtimeId: string; version: number; health: string; behind: number }[] = [];
    await untilAsync('every runtime reported version 2', async () => {
      listed = (await srv.api('GET', '/v1/tenants/acme/runtimes')).json.runtimes;
      return listed.length === fleet.length && listed.every((r) => r.version === 2 && r.health === 'fresh' && r.behind === 0);
    });
    expect(listed.map((r) => r.runtimeId).sort()).toEqual(fleet.map((_, i) => `fleet-${i}`).sort());
  });

  it('keeps the last good bundle while the server is killed, then converges on what was published meanwhile', async () => {
    const srv = await startLiveServer();
    await srv.createTenant('acme');
    const token = await srv.tokenFor('runtime', ['acme']);
    const v1 = await makeSignedBundle({ tenant: 'acme', version: 1 }, key);
    await place(srv, 1, v1);
    const fleet = await Promise.all(Array.from({ length: 5 }, (_, i) => client(srv, token, { runtimeId: `node-${i}` })));
    await until('all fresh on version 1', () => fleet.every((c) => c.status().version === 1 && c.status().health === 'fresh'));

    await srv.stop();
    await until('all stale', () => fleet.every((c) => c.status().health === 'stale'));
    for (const c of fleet) {
      expect(c.status()).toMatchObject({ version: 1, lastError: 'unreachable' });
      expect(c.decide({ subject: 'agent:support-bot' }, { name: 'core__tool-0001', arguments: { query: 'still works' } }).decision).toBe('allow');
    }
    const v2 = await makeSignedBundle({ tenant: 'acme', version: 2, flavor: 'while down', previousRevision: v1.bundle.revision }, key);
    await insertBundleInto(srv.dir, 'acme', 2, { ...v2, revision: v2.bundle.revision });

    const again = await startLiveServer({ dir: srv.dir, port: srv.port });
    servers.push(again);
    await until('all fresh on version 2', () => fleet.every((c) => c.status().version === 2 && c.status().health === 'fresh'), 15_000);
    await untilAsync('the restarted server hears every runtime', async () => {
      const rows = (await again.api('GET', '/v1/tenants/acme/runtimes')).json.runtimes as { version: number }[];
      return rows.length === fleet.length && rows.every((r) => r.version === 2);
    });
  });

  it('refuses a cache file edited on disk at start, then takes the good bundle from the server', async () => {
    const srv = await server();
    await srv.createTenant('acme');
    const token = await srv.tokenFor('runtime', ['acme']);
    const v1 = await makeSignedBundle({ tenant: 'acme', version: 1 }, key);
    await place(srv, 1, v1);
    const cacheDir = await mkdtemp(join(tmpdir(), 'toolgate-live-client-'));
    const first = await client(srv, token, { cacheDir });
    await until('version 1', () => first.status().version === 1);
    await first.close();

    const file = join(cacheDir, 'acme.v1.bundle.json');
    const edited = (await readFile(file, 'utf8')).replace('"deny":["core__tool-0000"]', '"deny":[]');
    expect(edited).not.toBe(v1.text);
    await writeFile(file, edited);

    const second = await client(srv, token, { cacheDir });
    expect(second.status()).toMatchObject({ health: 'none', lastError: 'bad_signature', version: null });
    expect(second.current()).toBeUndefined();
    await until('the server copy accepted', () => second.status().version === 1 && second.status().health === 'fresh');
    await second.close(); // the bundle is in use before it is persisted; close() waits for the write
    expect(await readFile(file, 'utf8')).toBe(v1.text);
  });

  it('cannot pull another tenant with a runtime token: not_found, nothing held, every call denied', async () => {
    const srv = await server();
    await srv.createTenant('acme');
    await srv.createTenant('globex');
    await place(srv, 1, await makeSignedBundle({ tenant: 'globex', version: 1 }, key), 'globex');
    const acmeToken = await srv.tokenFor('runtime', ['acme']);
    const c = await client(srv, acmeToken, { tenant: 'globex' });
    await until('not_found', () => c.status().lastError === 'not_found');
    expect(c.status().health).toBe('none');
    expect(c.decide({ subject: 'agent:support-bot' }, { name: 'core__tool-0001', arguments: { query: 'x' } }).decision).toBe('deny');
  });

  it('reports unauthorized for a revoked or unknown token', async () => {
    const srv = await server();
    await srv.createTenant('acme');
    const c = await client(srv, 'tg_unknown_token');
    await until('unauthorized', () => c.status().lastError === 'unauthorized');
    expect(c.status().health).toBe('none');
  });
});

function withRevision(s: SignedBundle): Pick<SignedBundle, 'text' | 'signature'> & { revision: string } {
  return { text: s.text, signature: s.signature, revision: s.bundle.revision };
}

async function untilAsync(what: string, cond: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
