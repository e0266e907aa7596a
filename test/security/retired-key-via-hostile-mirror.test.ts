import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BundleClient, createBundleClient } from '../../runtime/client/bundle-client.ts';
import { KeyStore, type SignedKeySet } from '../../server/signing/key-store.ts';
import { type SignedBundle, type TestKey, makeSignedBundle } from '../distribution/signed-bundles.ts';

// A signing key leaked and was retired. A hostile mirror still serves an old, unexpired key set
// that lists it as active, and a bundle signed with it. A runtime with an empty cache that took the
// mirror's key set kept it for an hour once the control plane answered again, and so accepted the
// leaked key's bundles the next time it fell back to the mirror. A runtime that can reach the
// control plane now takes the control plane's key set before a mirror's, and asks mirrors only
// what the control plane cannot answer.

const tenant = 'acme';
const SERVER = 'http://control-plane.test';
const MIRROR = 'http://mirror.test';
let work: string;
let oldKeySet: SignedKeySet; // K1 active, K2 next: what the hostile mirror serves
let currentKeySet: SignedKeySet; // K1 retired, K2 active: what the control plane serves
let k1: TestKey;
let k2: TestKey;
let genuineOld: SignedBundle; // v3, signed by K1 while it was active
let current: SignedBundle; // v5, signed by K2
let forged: SignedBundle; // v6, signed by the leaked K1
const open: BundleClient[] = [];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'toolgate-hostile-mirror-'));
  const store = new KeyStore(join(work, 'keys'));
  await store.keySet();
  const first = await store.signer();
  k1 = { kid: first.kid, privateKey: first.privateKey as CryptoKey, publicJwk: first.publicJwk };
  const rotated = await store.rotate();
  k2 = { kid: rotated.kid, privateKey: rotated.privateKey as CryptoKey, publicJwk: rotated.publicJwk };
  oldKeySet = await store.keySet();
  await store.promote(k2.kid);
  await store.retire(k1.kid);
  currentKeySet = await store.keySet();
  expect(currentKeySet.keySet.keys.find((k) => k.kid === k1.kid)?.status).toBe('retired');
  expect(oldKeySet.keySet.keys.find((k) => k.kid === k1.kid)?.status).toBe('active');
  genuineOld = await makeSignedBundle({ tenant, version: 3, flavor: 'old' }, k1);
  current = await makeSignedBundle({ tenant, version: 5, flavor: 'current' }, k2);
  forged = await makeSignedBundle({ tenant, version: 6, flavor: 'forged' }, k1);
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The control plane and one hostile mirror, as one fetch. */
function network() {
  const n = {
    serverDown: false,
    /** The control plane is up but its key-set request fails on the wire this many more times. */
    keySetFailures: 0,
    /** What the control plane answers to bundle pulls: its bundle, or a 503. */
    serverBundle: current as SignedBundle | 503,
    mirrorBundle: genuineOld,
    mirrorKeySetFetches: 0,
  };
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    if (url.origin === MIRROR) {
      if (url.pathname === '/keyset.json') {
        n.mirrorKeySetFetches++;
        return new Response(new Uint8Array(oldKeySet.bytes), { status: 200 });
      }
      if (url.pathname === '/keyset.json.jws') return new Response(oldKeySet.signature);
      if (url.pathname === `/${tenant}/latest.json`) return new Response(n.mirrorBundle.text);
      if (url.pathname === `/${tenant}/latest.json.jws`) return new Response(n.mirrorBundle.signature);
      return new Response('not found', { status: 404 });
    }
    if (n.serverDown) throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
    if (init?.method === 'POST') return new Response(null, { status: 204 });
    if (url.pathname === '/.well-known/toolgate-keyset.json') {
      if (n.keySetFailures > 0) {
        n.keySetFailures--;
        throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
      }
      return new Response(new Uint8Array(currentKeySet.bytes), {
        headers: { 'toolgate-signature': currentKeySet.signature, 'toolgate-version': String(currentKeySet.keySet.version) },
      });
    }
    if (url.pathname === `/v1/tenants/${tenant}/bundles/latest`) {
      if (n.serverBundle === 503) return new Response('{"code":"internal"}', { status: 503 });
      const b = n.serverBundle;
      const etag = `"${b.bundle.revision}"`;
      if ((new Headers(init?.headers).get('if-none-match') ?? '').includes(etag)) {
        await new Promise((r) => setTimeout(r, 20));
        return new Response(null, { status: 304, headers: { etag, 'toolgate-version': String(b.bundle.version) } });
      }
      return new Response(b.text, { headers: { etag, 'toolgate-signature': b.signature, 'toolgate-version': String(b.bundle.version) } });
    }
    return new Response('not found', { status: 404 });
  }) as typeof fetch;
  return { n, fetchFn };
}

async function startClient(fetchFn: typeof fetch): Promise<BundleClient> {
  const client = await createBundleClient({
    url: SERVER,
    tenant,
    token: 'tg_runtime',
    cacheDir: mkdtempSync(join(work, 'cache-')),
    trustedRoots: oldKeySet.keySet.roots,
    mirrors: [MIRROR],
    fetch: fetchFn,
    waitSeconds: 1,
    backoff: { initialMs: 10, maxMs: 40 },
    statusIntervalMs: 0,
    decisionLog: false,
  });
  open.push(client);
  return client;
}

/** Resolves when `test` holds (checked every 10 ms; the test's own timeout bounds the wait). */
async function until(test: () => boolean): Promise<void> {
  while (!test()) await new Promise((r) => setTimeout(r, 10));
}

function refusals(client: BundleClient) {
  const seen: { code: string; message: string }[] = [];
  client.on('refused', (r) => seen.push(r));
  return seen;
}

describe("a runtime that can reach the control plane takes its key set before a hostile mirror's", () => {
  it('started while the control plane was down: once it answers, its key set replaces the mirror’s, and the leaked key’s next bundle is refused', async () => {
    const { n, fetchFn } = network();
    n.serverDown = true;
    const client = await startClient(fetchFn);
    const refused = refusals(client);
    // What remains with only a hostile mirror in reach: its key set and its bundle are taken.
    await until(() => client.current()?.bundle.version === 3);
    n.serverDown = false;
    await until(() => client.current()?.bundle.version === 5);
    expect(client.keySet()?.version).toBe(currentKeySet.keySet.version);
    // The control plane goes away again; the mirror now serves a bundle signed by the leaked key.
    n.mirrorBundle = forged;
    n.serverDown = true;
    await until(() => refused.some((r) => r.message.includes(k1.kid) || r.code === 'retired_key'));
    expect(client.current()?.bundle.version).toBe(5);
  });

  it('a bundle the mirror gave, signed by the retired key, is dropped as soon as the control plane answers, even with nothing newer to offer', async () => {
    const { n, fetchFn } = network();
    n.serverDown = true;
    const client = await startClient(fetchFn);
    const refused = refusals(client);
    await until(() => client.current()?.bundle.version === 3);
    n.serverBundle = 503;
    n.serverDown = false;
    await until(() => client.current() === undefined);
    expect(refused.map((r) => r.code)).toContain('retired_key');
    expect(client.keySet()?.version).toBe(currentKeySet.keySet.version);
  });

  it('the control plane reachable but its key-set request lost once at start: the mirror’s key set is replaced at the first answer', async () => {
    const { n, fetchFn } = network();
    n.keySetFailures = 1;
    const client = await startClient(fetchFn);
    await until(() => client.current()?.bundle.version === 5);
    await until(() => client.keySet()?.version === currentKeySet.keySet.version);
    n.mirrorBundle = forged;
    n.serverDown = true;
    const refused = refusals(client);
    await until(() => refused.length > 0);
    expect(client.current()?.bundle.version).toBe(5);
  });

  it('with the control plane reachable at start, the mirror is never asked for a key set', async () => {
    const { n, fetchFn } = network();
    const client = await startClient(fetchFn);
    await until(() => client.current()?.bundle.version === 5);
    expect(client.keySet()?.version).toBe(currentKeySet.keySet.version);
    expect(n.mirrorKeySetFetches).toBe(0);
  });

  it('a key-set request lost while bundle pulls succeed does not send the runtime to the mirror', async () => {
    const { n, fetchFn } = network();
    const client = await startClient(fetchFn);
    await until(() => client.current()?.bundle.version === 5);
    n.keySetFailures = 1;
    // An unknown kid makes the client fetch the key set once more; the control plane was reachable.
    n.serverBundle = await makeSignedBundle({ tenant, version: 7, flavor: 'unknown key' }, { ...k2, kid: 'k-unknown' });
    const refused = refusals(client);
    await until(() => refused.length > 0);
    expect(n.mirrorKeySetFetches).toBe(0);
    expect(client.keySet()?.version).toBe(currentKeySet.keySet.version);
  });
});
