import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { verifyBundle } from '../../runtime/verify-bundle.ts';
import { compilesSoFar } from '../../server/compiler/compile-bundle.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// A publish of a tenant with policy tests used to compile its draft twice: once for the tests,
// once for the bundle. The tests gate and the publish now share one compiled draft, and the
// publish only writes a new envelope around it.

const tenant = 'acme-research';
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const cur = await t.request('GET', `/v1/tenants/${tenant}/tests`);
  const tests = [
    {
      name: 'research bot can query knowledge',
      request: { subject: 'agent:research-bot', groups: ['knowledge'] },
      expect: { visible: ['core__knowledge-query'] },
    },
  ];
  const r = await t.request('PUT', `/v1/tenants/${tenant}/tests`, {
    body: { tests },
    headers: { 'if-match': cur.headers.get('etag')!, 'toolgate-reason': 'a net' },
  });
  expect(r.status).toBe(200);
});
afterAll(async () => t?.close());

/** Changes the draft (a new binding), so the next publish has new content. */
async function editDraft(subject: string): Promise<void> {
  const pol = await t.request('GET', `/v1/tenants/${tenant}/policy`);
  const { version: _v, createdAt: _c, updatedAt: _u, tenant: _t, ...policy } = pol.json;
  policy.bindings = { ...policy.bindings, [subject]: ['researcher'] };
  const r = await t.request('PUT', `/v1/tenants/${tenant}/policy`, { body: policy, headers: { 'if-match': pol.headers.get('etag')! } });
  expect(r.status).toBe(200);
}

describe('a publish compiles its draft once', () => {
  it('with policy tests, the tests and the bundle come from one compile, and the bundle verifies with the new envelope', async () => {
    await editDraft('agent:compiled-once');
    const before = compilesSoFar();
    const r = await t.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'one compile' } });
    expect(r.status).toBe(201);
    expect(compilesSoFar() - before).toBe(1);

    const pulled = await t.request('GET', `/v1/tenants/${tenant}/bundles/latest`, { headers: { 'accept-encoding': 'identity' } });
    expect(pulled.status).toBe(200);
    const jwks = (await t.request('GET', '/.well-known/jwks.json')).json;
    const verified = await verifyBundle(Buffer.from(pulled.text, 'utf8'), pulled.headers.get('toolgate-signature')!, { trustedKeys: jwks, tenant });
    expect(verified.ok).toBe(true);
    const bundle = JSON.parse(pulled.text);
    expect(bundle).toMatchObject({ version: r.json.version, revision: r.json.revision });
    expect(bundle.policy.bindings['agent:compiled-once']).toEqual(['researcher']);
    expect(Date.parse(bundle.expiresAt) - Date.parse(bundle.issuedAt)).toBe(bundle.policy.bundleTtlSeconds * 1000);
    expect(loadBundle(bundle).byId.has('core__knowledge-query')).toBe(true);
  });

  it('publishing the same draft again compiles nothing and answers the version there is', async () => {
    const latest = (await t.request('GET', `/v1/tenants/${tenant}/bundles`)).json.items[0];
    const before = compilesSoFar();
    const r = await t.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'nothing new' } });
    expect(r.status).toBe(200);
    expect(r.json.version).toBe(latest.version);
    expect(compilesSoFar() - before).toBe(0);
  });

  it('a draft that fails its tests is refused after one compile, and nothing is published', async () => {
    const pol = await t.request('GET', `/v1/tenants/${tenant}/policy`);
    const { version: _v, createdAt: _c, updatedAt: _u, tenant: _t, ...policy } = pol.json;
    policy.roles.researcher.allow = ['core__text-completion'];
    expect((await t.request('PUT', `/v1/tenants/${tenant}/policy`, { body: policy, headers: { 'if-match': pol.headers.get('etag')! } })).status).toBe(200);
    const versions = (await t.request('GET', `/v1/tenants/${tenant}/bundles`)).json.items.length;
    const before = compilesSoFar();
    const r = await t.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'breaks a test' } });
    expect(r.status).toBe(422);
    expect(r.json.code).toBe('tests_failed');
    expect(compilesSoFar() - before).toBe(1);
    expect((await t.request('GET', `/v1/tenants/${tenant}/bundles`)).json.items).toHaveLength(versions);
  });
});
