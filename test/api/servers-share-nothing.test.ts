import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PublishedEvent } from '../../server/distribution/publish-events.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// The application context is built once per server at start and owns what its handlers use: two
// servers in one process (as tests and embedders run them) share none of it, so one server's load
// or state never reaches the other.

const tenant = 'acme-research';
let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  [a, b] = await Promise.all([startTestApp(), startTestApp()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe('two servers in one process', () => {
  it('are built with contexts of their own', () => {
    expect(a.deps).not.toBe(b.deps);
    expect(a.deps.impactSlots).not.toBe(b.deps.impactSlots);
    expect(a.deps.publishEvents).not.toBe(b.deps.publishEvents);
    expect(a.deps.bundles).not.toBe(b.deps.bundles);
    expect(a.deps.database).not.toBe(b.deps.database);
  });

  it('each runs its own impact analyses: one server full of them refuses (429) while the other answers', async () => {
    const held = Array.from({ length: a.deps.impactSlots.max }, () => a.deps.impactSlots.take());
    expect(held.every((release) => release !== null)).toBe(true);
    try {
      const refused = await a.request('POST', `/v1/tenants/${tenant}/impact`, { body: {} });
      expect(refused.status).toBe(429);
      expect(refused.json.code).toBe('rate_limited');
      const answered = await b.request('POST', `/v1/tenants/${tenant}/impact`, { body: {} });
      expect(answered.status).toBe(200);
      expect(answered.json).toMatchObject({ truncated: false });
    } finally {
      for (const release of held) release?.();
    }
    expect((await a.request('POST', `/v1/tenants/${tenant}/impact`, { body: {} })).status).toBe(200);
  });

  it("a publish on one is announced to its own cache and listeners only, and is not seen on the other's bundle route", async () => {
    const heardOnA: number[] = [];
    const heardOnB: number[] = [];
    const onA = (e: PublishedEvent) => heardOnA.push(e.version);
    const onB = (e: PublishedEvent) => heardOnB.push(e.version);
    a.deps.publishEvents.on('published', onA);
    b.deps.publishEvents.on('published', onB);
    const published = await a.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'only on a' } });
    expect(published.status).toBe(201);
    expect((await a.request('GET', `/v1/tenants/${tenant}/bundles/latest`)).status).toBe(200);
    expect((await b.request('GET', `/v1/tenants/${tenant}/bundles/latest`)).status).toBe(404);
    a.deps.publishEvents.off('published', onA);
    b.deps.publishEvents.off('published', onB);
    expect(heardOnA).toEqual([published.json.version]);
    expect(heardOnB).toEqual([]);
    expect(a.deps.bundles.fresh(tenant)?.version).toBe(published.json.version);
    expect(b.deps.bundles.fresh(tenant)).toBeUndefined();
  });
});
