import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('optimistic concurrency', () => {
  it('lets exactly one of two concurrent edits with the same If-Match succeed', async () => {
    const current = await t.request('GET', '/v1/tenants/acme-research/policy');
    const etag = current.headers.get('etag')!;
    const { version: _v, tenant: _t, createdAt: _c, updatedAt: _u, ...policy } = current.json;
    const edit = (ttl: number) =>
      t.request('PUT', '/v1/tenants/acme-research/policy', { body: { ...policy, bundleTtlSeconds: ttl }, headers: { 'if-match': etag } });
    const results = await Promise.all([edit(600), edit(1200)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
    const loser = results.find((r) => r.status === 412)!;
    const winner = results.find((r) => r.status === 200)!;
    expect(loser.json.current.bundleTtlSeconds).toBe(winner.json.bundleTtlSeconds);
    const audit = (await t.request('GET', '/v1/audit?entityType=policy&entityId=acme-research&action=update')).json.items;
    expect(audit).toHaveLength(1);
  });

  it('keeps the chain intact under many concurrent writers', async () => {
    await Promise.all(Array.from({ length: 40 }, (_, i) => t.request('POST', '/v1/states', { body: { name: `s${i}` } })));
    const v = await t.request('GET', '/v1/audit/verify');
    expect(v.json.ok).toBe(true);
    expect((await t.request('GET', '/v1/states')).json.items.length).toBeGreaterThanOrEqual(41);
  });
});
