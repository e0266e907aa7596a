// Attack: change an entity without naming the version you saw (If-Match: *, no If-Match where it
// was optional), overwriting or revoking whatever someone else changed meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { etag, importQuarantinedTool } from './support.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await importQuarantinedTool(t, 'x', 'y');
  const grant = await t.request('POST', '/v1/tenants/acme-research/grants', { body: { connectionId: 'conn-1', subjects: ['researcher'], tools: ['core__*'] } });
  if (grant.status !== 201) throw new Error(grant.text);
});
afterAll(async () => t.close());

const changes: Array<[string, string, unknown?]> = [
  ['PUT', '/v1/groups/knowledge', { name: 'knowledge', description: 'overwritten' }],
  ['PATCH', '/v1/tools/core__knowledge-query', { description: 'overwritten' }],
  ['DELETE', '/v1/states/results'],
  ['PUT', '/v1/tenants/acme-research/policy', { roles: {}, bindings: {} }],
  ['PATCH', '/v1/tenants/acme-research', { name: 'overwritten' }],
  ['DELETE', '/v1/tenants/acme-research/grants/conn-1'],
  ['PUT', '/v1/tenants/acme-research/tests', { tests: [] }],
  ['DELETE', '/v1/mcp-servers/x'],
];

describe('If-Match: * names no version', () => {
  for (const [method, path, body] of changes) {
    it(`answers ${method} ${path} with 412 carrying the current version, and changes nothing`, async () => {
      const before = await t.request('GET', path);
      const r = await t.request(method, path, { body, headers: { 'if-match': '*' } });
      expect(r.status).toBe(412);
      expect(r.json.code).toBe('precondition_failed');
      expect(r.json.current).toMatchObject({ version: before.json.version });
      expect((await t.request('GET', path)).json).toEqual(before.json);
    });
  }

  it('answers an If-Match that is no ETag of ours with 412 and the current version too', async () => {
    for (const value of ['"abc"', 'W/"x"', '"1", "2"']) {
      const r = await t.request('PATCH', '/v1/tools/core__knowledge-query', { body: { description: 'x' }, headers: { 'if-match': value } });
      expect(r.status).toBe(412);
      expect(r.json.current.version).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('revoking a token names its version', () => {
  it('gives tokens an ETag and refuses DELETE without If-Match (428) or with * (412), then revokes with the ETag', async () => {
    const created = await t.request('POST', '/v1/tokens', { body: { label: 'ci', role: 'viewer', tenants: ['acme-research'] } });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const read = await t.request('GET', `/v1/tokens/${id}`);
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe('"1"');
    expect(read.json).not.toHaveProperty('token');
    expect((await t.request('DELETE', `/v1/tokens/${id}`)).status).toBe(428);
    const star = await t.request('DELETE', `/v1/tokens/${id}`, { headers: { 'if-match': '*' } });
    expect(star.status).toBe(412);
    expect(star.json.current).toMatchObject({ id, version: 1 });
    expect((await t.request('GET', '/v1/tenants/acme-research', { token: created.json.token })).status).toBe(200);
    expect((await t.request('DELETE', `/v1/tokens/${id}`, { headers: { 'if-match': '"2"' } })).status).toBe(412);
    expect((await t.request('DELETE', `/v1/tokens/${id}`, { headers: { 'if-match': read.headers.get('etag')! } })).status).toBe(204);
    expect((await t.request('GET', '/v1/tenants/acme-research', { token: created.json.token })).status).toBe(401);
  });

  it('moves a token version when deleting a tenant rescopes it, so a revoke based on the old scope is refused', async () => {
    await t.request('POST', '/v1/tenants', { body: { id: 'scratch', name: 'Scratch' } });
    const created = await t.request('POST', '/v1/tokens', { body: { label: 'two', role: 'viewer', tenants: ['acme-research', 'scratch'] } });
    const seen = created.headers.get('etag')!;
    expect((await t.request('DELETE', '/v1/tenants/scratch', { headers: { 'if-match': await etag(t, '/v1/tenants/scratch') } })).status).toBe(204);
    const stale = await t.request('DELETE', `/v1/tokens/${created.json.id}`, { headers: { 'if-match': seen } });
    expect(stale.status).toBe(412);
    expect(stale.json.current).toMatchObject({ tenants: ['acme-research'], version: 2 });
  });
});

describe('approving a tool names its version', () => {
  it('refuses approval without If-Match (428) or with * (412 with the current version); the tool stays quarantined', async () => {
    const tool = await t.request('GET', '/v1/tools/mcp__x__y');
    const body = { definitionHash: tool.json.definitionHash };
    expect((await t.request('POST', '/v1/tools/mcp__x__y/approve', { body })).status).toBe(428);
    const star = await t.request('POST', '/v1/tools/mcp__x__y/approve', { body, headers: { 'if-match': '*' } });
    expect(star.status).toBe(412);
    expect(star.json.current).toMatchObject({ id: 'mcp__x__y', version: tool.json.version, status: 'quarantined' });
    expect((await t.request('GET', '/v1/tools/mcp__x__y')).json.status).toBe('quarantined');
    const ok = await t.request('POST', '/v1/tools/mcp__x__y/approve', { body, headers: { 'if-match': tool.headers.get('etag')! } });
    expect(ok.status).toBe(200);
  });
});

describe('changing the signing keys names the key-set version', () => {
  const keyChange = (path: string, ifMatch?: string) =>
    t.request('POST', path, { body: { reason: 'security test' }, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } });

  it('refuses rotate, promote and retire without If-Match (428) or with * (412 with the current keys); the key set stays', async () => {
    const before = await t.request('GET', '/v1/keys');
    expect(before.headers.get('etag')).toBe(`"${before.json.keySet.version}"`);
    const kid = before.json.keys[0].kid as string;
    for (const path of ['/v1/keys/rotate', `/v1/keys/${kid}/promote`, `/v1/keys/${kid}/retire`]) {
      expect((await keyChange(path)).status, path).toBe(428);
      const star = await keyChange(path, '*');
      expect(star.status, path).toBe(412);
      expect(star.json.current).toEqual(before.json);
    }
    expect((await t.request('GET', '/v1/keys')).json).toEqual(before.json);
  });

  it('refuses a promotion based on a key set someone else changed meanwhile, and shows the keys as they are now', async () => {
    const seen = (await keyChange('/v1/keys/rotate', (await t.request('GET', '/v1/keys')).headers.get('etag')!)).json;
    const viewed = await t.request('GET', '/v1/keys');
    // Meanwhile another admin stages a different key with a scheduled promotion.
    const other = await t.request('POST', '/v1/keys/rotate', {
      body: { reason: 'other admin', promoteAfterSeconds: 3600 },
      headers: { 'if-match': viewed.headers.get('etag')! },
    });
    expect(other.status).toBe(201);
    const stale = await keyChange(`/v1/keys/${seen.kid}/promote`, viewed.headers.get('etag')!);
    expect(stale.status).toBe(412);
    expect(stale.json.current.keys.map((k: { kid: string }) => k.kid)).toContain(other.json.kid);
    expect(stale.json.current.keys.find((k: { kid: string }) => k.kid === seen.kid).status).toBe('next');
    expect((await t.request('GET', '/v1/keys')).json).toEqual(stale.json.current);
  });
});
