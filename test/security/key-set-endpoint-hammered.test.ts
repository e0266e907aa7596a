// The attack (or an outage made worse): the key-set endpoint fails (a 500, a proxy's error page,
// a root the runtime does not trust) while bundles still arrive. Every pull then asked for the key
// set again, twice, at the pace of the bundle pulls: a fleet of runtimes hammered an endpoint
// already in trouble. Failed key-set fetches now back off (capped, exponential, with jitter),
// whichever path asks for the key set, and a success resets the backoff.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type BundleClient, createBundleClient } from '../../runtime/client/bundle-client.ts';
import { makeKey, makeSignedBundle } from '../distribution/signed-bundles.ts';

const open: BundleClient[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function until(what: string, cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('a key-set endpoint that keeps failing', () => {
  it('is asked again only after a backoff, however many bundles arrive meanwhile', async () => {
    const signer = await makeKey('signing-1');
    const root = await makeKey('root-1');
    const signed = await makeSignedBundle({ tenant: 'acme', version: 1 }, signer);
    const counts = { keySet: 0, pulls: 0 };
    const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input));
      if (init?.method === 'POST') return new Response(null, { status: 204 });
      if (url.pathname === '/.well-known/toolgate-keyset.json') {
        counts.keySet++;
        return new Response('upstream trouble', { status: 500 });
      }
      counts.pulls++;
      return new Response(signed.text, { status: 200, headers: { 'toolgate-signature': signed.signature, etag: `"${signed.bundle.revision}"` } });
    }) as typeof fetch;
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-keyset-backoff-'));
    dirs.push(dir);
    const client = await createBundleClient({
      url: 'http://toolgate.test',
      tenant: 'acme',
      token: 'rt',
      trustedRoots: [{ kid: root.kid, kty: 'OKP', crv: 'Ed25519', x: root.publicJwk.x as string }],
      cacheDir: dir,
      fetch: fetchFn,
      waitSeconds: 0,
      backoff: { initialMs: 1, maxMs: 5 },
      keySetBackoff: { initialMs: 600_000, maxMs: 600_000 },
      statusIntervalMs: 0,
      decisionLog: false,
    });
    open.push(client);
    await until('30 bundle pulls', () => counts.pulls >= 30);
    // The fetch made on start failed; every pull since found the key set still backing off.
    expect(counts.keySet).toBe(1);
    expect(client.current()).toBeUndefined();
    expect(client.status().lastError).toBe('unknown_kid');
  });
});
