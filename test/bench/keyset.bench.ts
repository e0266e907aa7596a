// Key-set verification cost per pull. A runtime configured with root keys verifies the key set on
// start, hourly and once on an unknown kid; every bundle pull then checks the bundle against the
// key set's keys instead of a fixed JWKS. Prints: verifyKeySet alone, a bundle verification with
// trustedKeys from a verified key set against one with a fixed JWKS, and a key-set fetch + verify
// over HTTP from a live server (what an unknown kid adds to that pull).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyBundle } from '../../runtime/verify-bundle.ts';
import { verifyKeySet } from '../../runtime/verify-key-set.ts';
import { KeyStore } from '../../server/signing/key-store.ts';
import { startLiveServer } from '../distribution/live-server.ts';
import { makeSignedBundle } from '../distribution/signed-bundles.ts';
import type { TestKey } from '../distribution/signed-bundles.ts';

const ROUNDS = 2000;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function time(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(200, n); i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-keyset-bench-'));
  try {
    const store = new KeyStore(join(dir, 'keys'));
    await store.rotate();
    await store.promote();
    await store.rotate();
    const { bytes, signature, keySet } = await store.keySet();
    const signer = (await store.signer()) as unknown as TestKey;
    const signed = await makeSignedBundle({ tenant: 'acme', version: 1, tools: 100 }, signer);

    const ks = await time(ROUNDS, () => verifyKeySet(bytes, signature, { trustedRoots: keySet.roots }));
    const verified = await verifyKeySet(bytes, signature, { trustedRoots: keySet.roots });
    if (!verified.ok) throw new Error(verified.message);
    const jwks = await store.jwks();
    const viaKeySet = await time(ROUNDS / 4, () => verifyBundle(signed.text, signed.signature, { trustedKeys: verified.trustedKeys, tenant: 'acme' }));
    const viaJwks = await time(ROUNDS / 4, () => verifyBundle(signed.text, signed.signature, { trustedKeys: jwks, tenant: 'acme' }));
    console.log(`key set: ${keySet.keys.length} keys, ${bytes.length} bytes`);
    console.log(`verifyKeySet (signature under the root, canonical form, schema, version, expiry): p50 ${us(pct(ks, 50))} · p99 ${us(pct(ks, 99))}`);
    console.log(
      `verifyBundle, 100-tool bundle, keys from a verified key set: p50 ${us(pct(viaKeySet, 50))} · p99 ${us(pct(viaKeySet, 99))}; with a fixed JWKS: p50 ${us(pct(viaJwks, 50))} · p99 ${us(pct(viaJwks, 99))}`,
    );

    const srv = await startLiveServer();
    try {
      const url = `${srv.url}/.well-known/toolgate-keyset.json`;
      const roots = (await new KeyStore(srv.deps.config.keysDir).keySet()).keySet.roots;
      const http = await time(ROUNDS / 4, async () => {
        const res = await fetch(url);
        const r = await verifyKeySet(Buffer.from(await res.arrayBuffer()), res.headers.get('toolgate-signature'), { trustedRoots: roots });
        if (!r.ok) throw new Error(r.message);
      });
      console.log(`key-set fetch over HTTP + verify (what an unknown kid adds to one pull): p50 ${us(pct(http, 50))} · p99 ${us(pct(http, 99))}`);
      // Refreshed hourly: with the default 30 s long-poll a runtime makes up to 120 pulls an hour.
      console.log(`amortised over an hour of 30 s long-polls (hourly refresh): ${((pct(http, 50) * 1000) / 120).toFixed(1)} µs per pull`);
    } finally {
      await srv.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
