import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ seed: false });
});
afterAll(async () => t.close());

const policy = (subject: string) => ({ roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { [subject]: ['r'] } });

describe('deleting a tenant and creating one of the same id', () => {
  it('leaves no old token, session or cached bundle reaching the new tenant', async () => {
    await t.request('POST', '/v1/tenants', { body: { id: 't1', name: 'Old customer', policy: policy('agent:old') } });
    expect((await t.request('POST', '/v1/tenants/t1/bundles', { body: { reason: 'old' } })).status).toBe(201);
    const viewer = await t.tokenFor('viewer', ['t1']);
    const runtime = await t.tokenFor('runtime', ['t1']);
    const old = await t.request('GET', '/v1/tenants/t1/bundles/1', { token: runtime });
    expect(old.status).toBe(200);
    const oldLatest = await t.request('GET', '/v1/tenants/t1/bundles/latest', { token: runtime });
    expect(oldLatest.status).toBe(200);

    expect((await t.request('DELETE', '/v1/tenants/t1', { headers: { 'if-match': '"1"' } })).status).toBe(204);
    expect((await t.request('GET', '/v1/tenants/t1/bundles/1', { token: runtime })).status).toBe(401);
    expect((await t.request('GET', '/v1/tenants/t1/policy', { token: viewer })).status).toBe(401);
    const audit = (await t.request('GET', '/v1/audit?entityType=token&action=delete')).json.items;
    expect(audit.map((e: { reason: string }) => e.reason)).toEqual(['tenant t1 was deleted', 'tenant t1 was deleted']);

    await t.request('POST', '/v1/tenants', { body: { id: 't1', name: 'New customer', policy: policy('agent:new') } });
    const published = await t.request('POST', '/v1/tenants/t1/bundles', { body: { reason: 'new' } });
    expect(published.status).toBe(201);
    const admin = await t.request('GET', '/v1/tenants/t1/bundles/latest');
    expect(admin.headers.get('etag')).toBe(`"${published.json.revision}"`);
    expect(admin.text).toContain('agent:new');
    expect(admin.text).not.toContain('agent:old');
    const pinned = await t.request('GET', '/v1/tenants/t1/bundles/1');
    expect(pinned.text).toBe(admin.text);
  });

  it('keeps a token that reaches other tenants, without the deleted one', async () => {
    await t.request('POST', '/v1/tenants', { body: { id: 'a', name: 'A' } });
    await t.request('POST', '/v1/tenants', { body: { id: 'b', name: 'B' } });
    const editor = await t.tokenFor('editor', ['a', 'b']);
    await t.request('DELETE', '/v1/tenants/a', { headers: { 'if-match': '"1"' } });
    expect((await t.request('GET', '/v1/tenants', { token: editor })).json.items.map((x: { id: string }) => x.id)).toEqual(['b']);
    const listed = (await t.request('GET', '/v1/tokens')).json.items.find(
      (x: { role: string; tenants: string[] }) => x.tenants.includes('b') && x.role === 'editor',
    );
    expect(listed.tenants).toEqual(['b']);
  });
});
