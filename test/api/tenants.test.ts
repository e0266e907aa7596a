import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

const ifMatch = (v: number) => ({ 'if-match': `"${v}"` });

describe('tenants', () => {
  it('creates a tenant whose policy denies everything by default', async () => {
    const r = await t.request('POST', '/v1/tenants', { body: { id: 'initech', name: 'Initech' } });
    expect(r.status).toBe(201);
    const p = await t.request('GET', '/v1/tenants/initech/policy');
    expect(p.status).toBe(200);
    expect(p.json).toMatchObject({ roles: {}, bindings: {}, bundleTtlSeconds: 86400, version: 1 });
    expect(p.headers.get('etag')).toBe('"1"');
  });

  it('validates the tenant id', async () => {
    const r = await t.request('POST', '/v1/tenants', { body: { id: 'Bad_Id', name: 'x' } });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/id');
    expect((await t.request('POST', '/v1/tenants', { body: { id: 'initech', name: 'again' } })).status).toBe(409);
  });

  it('renames a tenant with If-Match and refuses a policy in the tenant body', async () => {
    const r = await t.request('PUT', '/v1/tenants/initech', { body: { id: 'initech', name: 'Initech Inc' }, headers: ifMatch(1) });
    expect(r.status).toBe(200);
    expect(r.json.name).toBe('Initech Inc');
    const withPolicy = await t.request('PATCH', '/v1/tenants/initech', { body: { policy: {} }, headers: ifMatch(2) });
    expect(withPolicy.status).toBe(400);
    expect(withPolicy.json.errors[0].pointer).toBe('/policy');
  });

  it('saves a valid policy and bumps its version', async () => {
    const policy = {
      roles: {
        reader: { groups: ['read-only'], allow: ['core__knowledge-query', 'core__host_*'], deny: ['core__host_exec'], requireApproval: ['state_change'] },
      },
      bindings: { 'agent:reader': ['reader'] },
      profiles: { openai: { disable: ['core__host_exec'] } },
      budgets: { maxRuntimeMs: 1000 },
      bundleTtlSeconds: 600,
    };
    const r = await t.request('PUT', '/v1/tenants/initech/policy', { body: policy, headers: ifMatch(1) });
    expect(r.status).toBe(200);
    expect(r.json.version).toBe(2);
    expect(r.headers.get('etag')).toBe('"2"');
  });

  it('names every unknown group, role and tool in a policy, and saves nothing', async () => {
    const r = await t.request('PUT', '/v1/tenants/initech/policy', {
      body: {
        roles: { reader: { groups: ['read-only', 'no-such-group'], allow: ['core__nope', 'core__*'], deny: ['core__ghost'] } },
        bindings: { 'agent:x': ['reader', 'writer'] },
        profiles: { openai: { enable: ['core__phantom'] } },
      },
      headers: ifMatch(2),
    });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('unknown_reference');
    expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toEqual([
      '/roles/reader/groups/1',
      '/roles/reader/allow/0',
      '/roles/reader/deny/0',
      '/bindings/agent:x/1',
      '/profiles/openai/enable/0',
    ]);
    expect((await t.request('GET', '/v1/tenants/initech/policy')).json.version).toBe(2);
  });

  it('rejects a schema-invalid policy with pointers', async () => {
    const r = await t.request('PUT', '/v1/tenants/initech/policy', {
      body: { roles: { r: { requireApproval: ['sometimes'] } }, bundleTtlSeconds: 1 },
      headers: ifMatch(2),
    });
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toEqual(expect.arrayContaining(['/roles/r/requireApproval/0', '/bundleTtlSeconds']));
  });

  it('404s an unknown tenant on every sub-resource', async () => {
    for (const path of ['/v1/tenants/nope', '/v1/tenants/nope/policy', '/v1/tenants/nope/grants', '/v1/tenants/nope/grants/x']) {
      expect((await t.request('GET', path)).status).toBe(404);
    }
  });
});

describe('connection grants', () => {
  const grant = { connectionId: 'conn-1', label: 'CRM', subjects: ['reader'], tools: ['core__knowledge-query', 'core__host_*'] };

  it('creates, reads, replaces and deletes a grant', async () => {
    const c = await t.request('POST', '/v1/tenants/initech/grants', { body: grant });
    expect(c.status).toBe(201);
    expect(c.json).toMatchObject({ ...grant, tenant: 'initech', version: 1 });
    expect((await t.request('GET', '/v1/tenants/initech/grants')).json.items).toHaveLength(1);
    const u = await t.request('PUT', '/v1/tenants/initech/grants/conn-1', { body: { ...grant, expiresAt: '2030-01-01T00:00:00Z' }, headers: ifMatch(1) });
    expect(u.status).toBe(200);
    expect(u.json.expiresAt).toBe('2030-01-01T00:00:00Z');
    expect((await t.request('POST', '/v1/tenants/initech/grants', { body: grant })).status).toBe(409);
    expect((await t.request('DELETE', '/v1/tenants/initech/grants/conn-1', { headers: ifMatch(2) })).status).toBe(204);
  });

  it.each([
    ['a token field', { token: 'abc' }, '/token'],
    ['an apiKey field', { apiKey: 'abc' }, '/apiKey'],
    ['a nested password', { meta: { password: 'hunter2' } }, '/meta/password'],
    ['a private key value', { label: '-----BEGIN RSA PRIVATE KEY-----\nMII' }, '/label'],
    ['an Authorization field', { Authorization: 'Basic x' }, '/Authorization'],
    ['an OpenAI-style key as a label', { label: 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789' }, '/label'],
  ])('rejects %s with secret_field and stores nothing', async (_l, extra, pointer) => {
    const r = await t.request('POST', '/v1/tenants/initech/grants', { body: { ...grant, connectionId: 'conn-secret', ...extra } });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('secret_field');
    expect(r.json.errors[0].pointer).toBe(pointer);
    expect((await t.request('GET', '/v1/tenants/initech/grants/conn-secret')).status).toBe(404);
  });

  it('names an unknown exact tool id in a grant', async () => {
    const r = await t.request('POST', '/v1/tenants/initech/grants', { body: { ...grant, connectionId: 'conn-2', tools: ['core__nope'] } });
    expect(r.status).toBe(400);
    expect(r.json.errors[0]).toMatchObject({ pointer: '/tools/0', message: 'unknown tool "core__nope"' });
  });

  it('refuses a grant whose body names another tenant', async () => {
    const r = await t.request('POST', '/v1/tenants/initech/grants', { body: { ...grant, connectionId: 'conn-3', tenant: 'acme-research' } });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/tenant');
  });

  it('deletes a tenant with its policy and grants', async () => {
    await t.request('POST', '/v1/tenants', { body: { id: 'temp', name: 'Temp' } });
    await t.request('POST', '/v1/tenants/temp/grants', { body: grant });
    expect((await t.request('DELETE', '/v1/tenants/temp', { headers: ifMatch(1) })).status).toBe(204);
    expect((await t.request('GET', '/v1/tenants/temp/grants')).status).toBe(404);
  });
});
