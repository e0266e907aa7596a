import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/support/harness.ts';
import { needsReissue, startReissueScheduler } from './reissue-scheduler.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('re-issue before expiry', () => {
  it('asks for a re-issue once half of the lifetime is gone', () => {
    const lifetime = { issuedAt: '2030-01-01T00:00:00.000Z', expiresAt: '2030-01-02T00:00:00.000Z' };
    expect(needsReissue(lifetime, new Date('2030-01-01T11:59:00Z'))).toBe(false);
    expect(needsReissue(lifetime, new Date('2030-01-01T12:00:00Z'))).toBe(true);
  });

  it('re-signs the latest content as a new version with a later expiry, leaving the draft unpublished', async () => {
    const published = await t.request('POST', '/v1/tenants/globex-eng/bundles', { body: { reason: 'first' } });
    expect(published.status).toBe(201);
    // A draft edit that must not ride along with the re-issue.
    const policy = await t.request('GET', '/v1/tenants/globex-eng/policy');
    const { version: _v, tenant: _t, createdAt: _c, updatedAt: _u, ...doc } = policy.json;
    await t.request('PUT', '/v1/tenants/globex-eng/policy', { body: { ...doc, bundleTtlSeconds: 7200 }, headers: { 'if-match': policy.headers.get('etag')! } });

    const later = new Date(Date.now() + 3600 * 1000 * 0.75); // globex-eng's TTL is one hour
    const stop = startReissueScheduler(t.deps, { everyMs: 20, now: () => later });
    await new Promise((r) => setTimeout(r, 300));
    await stop();

    const versions = (await t.request('GET', '/v1/tenants/globex-eng/bundles')).json.items;
    expect(versions[0].version).toBe(published.json.version + 1);
    expect(versions[0].revision).toBe(published.json.revision);
    expect(Date.parse(versions[0].expiresAt)).toBeGreaterThan(Date.parse(versions[1].expiresAt));
    const audit = (await t.request('GET', '/v1/audit?entityType=bundle&tenant=globex-eng')).json.items.at(-1);
    expect(audit).toMatchObject({ actor: 'system', action: 'publish', reason: 're-issued before expiry; content unchanged' });
  });
});
