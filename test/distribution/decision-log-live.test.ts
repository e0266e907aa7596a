import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBundleClient } from '../../runtime/client/index.ts';
import type { BundleClient, BundleClientOptions } from '../../runtime/client/index.ts';
import { startLiveServer } from './live-server.ts';
import type { LiveServer } from './live-server.ts';
import { jwksOf, makeKey, makeSignedBundle } from './signed-bundles.ts';
import type { TestKey } from './signed-bundles.ts';

let key: TestKey;
const clients: BundleClient[] = [];
const servers: LiveServer[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  key = await makeKey('k1');
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  for (const s of servers) await s.dispose();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function liveTenant(): Promise<{ srv: LiveServer; token: string }> {
  const srv = await startLiveServer();
  servers.push(srv);
  await srv.createTenant('acme');
  const signed = await makeSignedBundle({ tenant: 'acme', version: 1 }, key);
  await srv.place('acme', 1, { ...signed, revision: signed.bundle.revision });
  return { srv, token: await srv.tokenFor('runtime', ['acme']) };
}

async function client(url: string, token: string, extra: Partial<BundleClientOptions>): Promise<BundleClient> {
  const cacheDir = await mkdtemp(join(tmpdir(), 'toolgate-decision-client-'));
  dirs.push(cacheDir);
  const c = await createBundleClient({
    url,
    tenant: 'acme',
    token,
    trustedKeys: jwksOf(key),
    cacheDir,
    waitSeconds: 1,
    backoff: { initialMs: 20, maxMs: 200 },
    statusIntervalMs: 0,
    ...extra,
  });
  clients.push(c);
  await expect.poll(() => c.status().version, { timeout: 10_000 }).toBe(1);
  return c;
}

const request = { subject: 'agent:support-bot', facts: { hostSession: 'ready' } };

describe('decision logs from SDK clients to a live server', () => {
  it('records what two runtimes decided; the records arrive and are queryable, without the arguments', async () => {
    const { srv, token } = await liveTenant();
    const a = await client(srv.url, token, { runtimeId: 'runtime-a', decisionLog: { flushIntervalMs: 100 } });
    const b = await client(srv.url, token, { runtimeId: 'runtime-b', decisionLog: { flushIntervalMs: 100 }, logFacts: false });
    const decided = [
      a.decide(request, { toolCallId: 'a-1', name: 'core__tool-0001', arguments: '{"query":"private question"}' }),
      a.decide(request, { toolCallId: 'a-2', name: 'core__tool-0000', arguments: '{"query":"x"}' }),
      b.decide(request, { toolCallId: 'b-1', name: 'core__tool-0002', arguments: '{"query":"y"}' }),
      b.decide(request, { toolCallId: 'b-2', name: 'core__tool-0001', arguments: 'not json' }),
    ];
    expect(decided.map((d) => d.decision)).toEqual(['allow', 'deny', 'require_approval', 'deny']);

    // Shipped on their own within a few intervals.
    await expect.poll(async () => (await srv.api('GET', '/v1/tenants/acme/decisions')).json.items.length, { timeout: 10_000 }).toBe(4);
    const listed = await srv.api('GET', '/v1/tenants/acme/decisions');
    expect(listed.text).not.toContain('private question');
    const byCall = Object.fromEntries(listed.json.items.map((d: { toolCallId: string }) => [d.toolCallId, d]));
    expect(byCall['a-1']).toMatchObject({
      runtimeId: 'runtime-a',
      subject: 'agent:support-bot',
      tool: 'core__tool-0001',
      decision: 'allow',
      bundleVersion: 1,
      facts: { hostSession: 'ready' },
    });
    expect(byCall['a-2']).toMatchObject({ decision: 'deny', errorCode: 'policy_denied', reason: 'denied' });
    expect(byCall['b-1']).toMatchObject({ runtimeId: 'runtime-b', decision: 'require_approval' });
    expect(byCall['b-1'].facts).toBeUndefined();
    expect(byCall['b-2']).toMatchObject({ decision: 'deny', errorCode: 'invalid_json' });
    const denied = await srv.api('GET', '/v1/tenants/acme/decisions?decision=deny&runtimeId=runtime-a');
    expect(denied.json.items.map((d: { toolCallId: string }) => d.toolCallId)).toEqual(['a-2']);
    expect(a.decisionLog!.stats()).toMatchObject({ buffered: 0, shipped: 2, dropped: 0 });
  });

  it('keeps deciding while the server is down, drops the oldest records once the ring is full, and reports the count when it is back', async () => {
    const { srv, token } = await liveTenant();
    const c = await client(srv.url, token, {
      runtimeId: 'runtime-offline',
      decisionLog: { capacity: 50, flushIntervalMs: 50, backoff: { initialMs: 20, maxMs: 100 } },
    });
    await srv.stop();

    const decisions = Array.from({ length: 120 }, (_, i) => c.decide(request, { toolCallId: `off-${i}`, name: 'core__tool-0001', arguments: '{"query":"q"}' }));
    expect(decisions.every((d) => d.decision === 'allow')).toBe(true);
    // Shipping attempts fail and back off; what the ring holds stays at its capacity.
    await expect.poll(() => c.decisionLog!.stats().lastError ?? '', { timeout: 5_000 }).toMatch(/cannot reach the server/);
    expect(c.decisionLog!.stats()).toMatchObject({ buffered: 50, dropped: 70, shipped: 0 });

    const back = await startLiveServer({ dir: srv.dir, port: srv.port });
    servers.push(back);
    await expect.poll(() => c.decisionLog!.stats().shipped, { timeout: 10_000 }).toBe(50);
    const stored = await back.api('GET', '/v1/tenants/acme/decisions?runtimeId=runtime-offline&limit=1000');
    // The newest 50 survived, in order; the 70 oldest were dropped and counted.
    expect(stored.json.items.map((d: { toolCallId: string }) => d.toolCallId)).toEqual(Array.from({ length: 50 }, (_, i) => `off-${119 - i}`));
    const summary = await back.api('GET', '/v1/tenants/acme/decisions/summary');
    expect(summary.json.runtimes).toEqual([expect.objectContaining({ runtimeId: 'runtime-offline', received: 50, dropped: 70 })]);
    await back.api('POST', '/v1/tenants/acme/runtimes/status', { token, body: { runtimeId: 'runtime-offline', version: 1, health: 'fresh' } });
    await expect
      .poll(
        async () =>
          (await back.api('GET', '/v1/tenants/acme/runtimes')).json.runtimes.find((r: { runtimeId: string }) => r.runtimeId === 'runtime-offline')
            ?.decisionsDropped,
        { timeout: 5_000 },
      )
      .toBe(70);
  });

  it('logs nothing with decisionLog: false', async () => {
    const { srv, token } = await liveTenant();
    const c = await client(srv.url, token, { runtimeId: 'runtime-quiet', decisionLog: false });
    expect(c.decisionLog).toBeUndefined();
    c.decide(request, { name: 'core__tool-0001', arguments: '{"query":"q"}' });
    // Closing ships whatever a log holds; there must be none.
    await c.close();
    expect((await srv.api('GET', '/v1/tenants/acme/decisions')).json.items).toEqual([]);
  });
});
