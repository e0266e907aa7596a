// The expiry drill: a bundle with a short lifetime, the server stopped. A running client denies
// from the instant the bundle expires, exactly as a client restarted on the same cache; with a
// grace period it keeps allowing until the grace ends.
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBundleClient } from '../../runtime/client/index.ts';
import type { BundleClient, BundleClientOptions, RootKey } from '../../runtime/client/index.ts';
import { KeyStore } from '../../server/signing/key-store.ts';
import { startLiveServer } from '../distribution/live-server.ts';
import type { LiveServer } from '../distribution/live-server.ts';
import { makeSignedBundle } from '../distribution/signed-bundles.ts';
import type { TestKey } from '../distribution/signed-bundles.ts';

let srv: LiveServer;
let token: string;
let root: RootKey[];
const clients: BundleClient[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  srv = await startLiveServer();
  await srv.createTenant('acme');
  token = await srv.tokenFor('runtime', ['acme']);
  root = (await new KeyStore(srv.deps.config.keysDir).keySet()).keySet.roots;
});

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await srv.dispose();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

// The clients' clock: moved forward by the test instead of waiting, so a loaded machine cannot
// expire the bundle before the clients have it.
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

async function client(cacheDir: string, extra: Partial<BundleClientOptions> = {}): Promise<BundleClient> {
  const c = await createBundleClient({
    url: srv.url,
    tenant: 'acme',
    token,
    trustedRoots: root,
    cacheDir,
    waitSeconds: 2,
    backoff: { initialMs: 20, maxMs: 200 },
    statusIntervalMs: 0,
    now: clock,
    ...extra,
  });
  clients.push(c);
  return c;
}

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'toolgate-expiry-'));
  dirs.push(d);
  return d;
}

async function until(what: string, cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** What a restart finds on disk: the cache once written (a client persists just after it holds), without a write in progress. */
async function copyCache(from: string, to: string): Promise<void> {
  await until('the cache on disk', () => existsSync(join(from, 'acme.state.json')) && existsSync(join(from, 'keyset.state.json')));
  await cp(from, to, { recursive: true, filter: (f) => !f.endsWith('.tmp') });
}

const request = { subject: 'agent:support-bot' };
const call = { name: 'core__tool-0001', arguments: '{"query":"docs"}' };

describe('expiry drill', () => {
  it('denies from the instant of expiry in a running client and a restarted one alike; a grace period allows until it ends', async () => {
    const signer = (await new KeyStore(srv.deps.config.keysDir).signer()) as unknown as TestKey;
    const expiresAt = new Date(Date.now() + 60_000);
    const signed = await makeSignedBundle({ tenant: 'acme', version: 1, expiresAt: expiresAt.toISOString() }, signer);
    await srv.place('acme', 1, { ...signed, revision: signed.bundle.revision });

    const runningDir = await tempDir();
    const graceDir = await tempDir();
    const running = await client(runningDir);
    const graced = await client(graceDir, { expiryGraceSeconds: 30 });
    await until('both clients on version 1', () => running.status().version === 1 && graced.status().version === 1);
    expect(running.decide(request, call).decision).toBe('allow');
    const view = running.view(request)!;

    // The control plane freezes: nothing re-issues the bundle.
    await srv.stop();
    offsetMs = expiresAt.getTime() - Date.now() + 1;

    const denied = { decision: 'deny', errorCode: 'policy_denied', message: 'policy bundle expired' };
    expect(running.decide(request, call)).toMatchObject(denied);
    // A view taken before the expiry decides nothing either.
    expect(running.decide(view, call)).toMatchObject(denied);
    expect(running.evaluate(request).tools).toEqual([]);
    expect(running.status()).toMatchObject({ health: 'stale', lastError: 'expired', version: 1 });

    // A restart on the same cache: the same rule, the same answers.
    const restartedDir = await tempDir();
    await copyCache(runningDir, restartedDir);
    const restarted = await client(restartedDir);
    expect(restarted.decide(request, call)).toMatchObject(denied);
    expect(restarted.evaluate(request).tools).toEqual([]);
    expect(restarted.status()).toMatchObject({ health: 'stale', lastError: 'expired', version: 1 });

    // With a grace period the bundle still decides, running and restarted, until the grace ends.
    expect(graced.decide(request, call).decision).toBe('allow');
    expect(graced.evaluate(request).tools.map((t) => t.id)).toContain('core__tool-0001');
    expect(graced.status()).toMatchObject({ health: 'stale', lastError: 'expired' });
    const gracedRestartDir = await tempDir();
    await copyCache(graceDir, gracedRestartDir);
    const gracedRestarted = await client(gracedRestartDir, { expiryGraceSeconds: 30 });
    expect(gracedRestarted.decide(request, call).decision).toBe('allow');

    offsetMs = expiresAt.getTime() + 30_000 - Date.now() + 1;
    expect(graced.decide(request, call)).toMatchObject(denied);
    expect(gracedRestarted.decide(request, call)).toMatchObject(denied);
    expect(graced.evaluate(request).tools).toEqual([]);
  });
});
