import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBundleClient } from '../../runtime/client/index.ts';
import type { BundleClient, TrustedKeys } from '../../runtime/client/index.ts';
import { startLiveServer } from './live-server.ts';
import type { LiveServer } from './live-server.ts';

// The compiler, signer and publish route as shipped, with the demo data: what a real runtime sees.
const tenant = 'acme-research';
let srv: LiveServer;
let token: string;
let trustedKeys: TrustedKeys;
const dirs: string[] = [];

beforeAll(async () => {
  srv = await startLiveServer({ seed: true });
  token = await srv.tokenFor('runtime', [tenant]);
  trustedKeys = (await srv.api('GET', '/.well-known/jwks.json', { token: null })).json;
});

afterAll(async () => {
  await srv?.dispose();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function publish(body: Record<string, unknown> = {}): Promise<{ version: number; revision: string }> {
  const r = await srv.api('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'distribution test', ...body } });
  if (r.status !== 201) throw new Error(`publish answered ${r.status}: ${r.text}`);
  return r.json;
}

async function startClient(cacheDir?: string): Promise<BundleClient> {
  const dir = cacheDir ?? (await mkdtemp(join(tmpdir(), 'toolgate-publish-client-')));
  dirs.push(dir);
  return createBundleClient({
    url: srv.url,
    tenant,
    token,
    trustedKeys,
    cacheDir: dir,
    runtimeId: 'publish-test',
    waitSeconds: 30,
    backoff: { initialMs: 20, maxMs: 200 },
    statusIntervalMs: 0,
  });
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('bundles published by the real compiler and signer', () => {
  it('are accepted by the client, and a later publish reaches it while it long-polls', async () => {
    const first = await publish();
    const c = await startClient();
    try {
      await until('the first bundle', () => c.status().version === first.version && c.status().health === 'fresh');
      expect(c.current()?.bundle.revision).toBe(first.revision);
      for (const request of [{ subject: 'agent:research-bot', groups: ['*'] }, { subject: 'agent:analysis-bot' }, { subject: 'agent:nobody' }]) {
        const sim = await srv.api('POST', `/v1/tenants/${tenant}/simulate`, { body: request });
        expect(sim.status).toBe(200);
        expect(c.evaluate(request)).toEqual(sim.json);
      }

      await until('the client waiting', () => srv.deps.bundles.waiting(tenant) >= 1);
      const state = await srv.api('POST', '/v1/states', { body: { name: 'distribution-test', description: 'changes the catalog' } });
      expect(state.status).toBe(201);
      const second = await publish();
      expect(second.version).toBe(first.version + 1);
      await until('the second bundle', () => c.status().version === second.version);
      expect(c.status()).toMatchObject({ health: 'fresh', revision: second.revision, lastError: null });
    } finally {
      await c.close();
    }
  });

  it('follows a rollback that re-issues content it already holds under a newer version', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-publish-client-'));
    const a = await startClient(dir);
    const held = await new Promise<{ version: number; revision: string }>((resolve) => {
      const check = () => {
        const s = a.status();
        if (s.health === 'fresh' && s.version !== null) resolve({ version: s.version, revision: s.revision! });
        else setTimeout(check, 10);
      };
      check();
    });
    await a.close();

    await srv.api('POST', '/v1/states', { body: { name: 'rollback-test', description: 'another change' } });
    const newer = await publish();
    const rolled = await publish({ rollbackTo: held.version });
    expect(rolled.revision).toBe(held.revision);
    expect(rolled.version).toBe(newer.version + 1);

    // The cached bundle has the rolled-back revision: latest answers 304, yet version rolled.version is newer.
    const b = await startClient(dir);
    try {
      await until('the re-issued version', () => b.status().version === rolled.version && b.status().health === 'fresh');
      expect(b.current()?.bundle.revision).toBe(held.revision);
    } finally {
      await b.close();
    }
  });
});
