// A token scoped to some tenants must learn nothing of the others, not even their ids: `/v1/keys`
// named every tenant whose latest bundle a key signs, while `/v1/tenants/<other>` answers 404. The
// sweep below reads every route that is not under one tenant, as scoped editors and viewers, and
// looks for another tenant's id anywhere in the answer (body and headers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

const HIDDEN = 'zeta-hidden-tenant';
const MINE = 'acme-research';
let t: TestApp;
const scoped: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestApp();
  expect((await t.request('POST', '/v1/tenants', { body: { id: HIDDEN, name: 'Zeta (hidden)' } })).status).toBe(201);
  // The hidden tenant binds the same agents to the same tools, so any view across tenants has something to leak.
  expect((await t.request('POST', `/v1/tenants/${MINE}/promote`, { body: { to: HIDDEN, reason: 'same policy' } })).status).toBe(200);
  for (const tenant of [MINE, HIDDEN]) {
    expect([200, 201]).toContain((await t.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'signed by the current key' } })).status);
  }
  scoped.viewer = await t.tokenFor('viewer', [MINE]);
  scoped.editor = await t.tokenFor('editor', [MINE]);
  scoped['viewer of two'] = await t.tokenFor('viewer', [MINE, 'globex-eng']);
});
afterAll(async () => t?.close());

describe('GET /v1/keys for a scoped token', () => {
  for (const who of ['viewer', 'editor', 'viewer of two']) {
    it(`names only the tenants a ${who} reaches as signed by a key`, async () => {
      const r = await t.request('GET', '/v1/keys', { token: scoped[who] });
      expect(r.status).toBe(200);
      const signing = r.json.keys.find((k: { signing: boolean }) => k.signing);
      expect(signing.latestBundleOf).toEqual([MINE]);
      expect(r.text).not.toContain(HIDDEN);
    });
  }

  it('still names every tenant to an admin and an auditor, who read them all', async () => {
    for (const token of [undefined, await t.tokenFor('auditor')]) {
      const r = await t.request('GET', '/v1/keys', { token });
      const signing = r.json.keys.find((k: { signing: boolean }) => k.signing);
      expect(signing.latestBundleOf).toEqual(expect.arrayContaining([MINE, HIDDEN]));
    }
  });
});

// Every GET a scoped token may try that is not under /v1/tenants/:tenant (those answer 404 for
// another tenant, tested in test/api/authorization.test.ts).
const GLOBAL_READS = [
  '/v1/keys',
  '/v1/overview',
  '/v1/tenants',
  '/v1/tools',
  '/v1/groups',
  '/v1/states',
  '/v1/mcp-servers',
  '/v1/session',
  '/v1/tokens',
  '/v1/sso/mappings',
  '/v1/audit',
  '/v1/audit/export',
  '/v1/audit/verify',
  '/v1/audit/checkpoints',
  '/v1/tools/core__knowledge-query/usage',
  '/v1/subjects/agent:research-bot',
  '/metrics',
  '/.well-known/jwks.json',
  '/.well-known/toolgate-keyset.json',
  `/v1/tenants/${HIDDEN}`,
  `/v1/tenants/${HIDDEN}/policy`,
  `/v1/tenants/${HIDDEN}/bundles/latest`,
];

describe('responses to scoped tokens', () => {
  it('are compared with what an admin is told, which names the other tenant', async () => {
    for (const path of ['/v1/keys', '/v1/overview', '/v1/tenants', '/v1/tools/core__knowledge-query/usage', '/v1/subjects/agent:research-bot']) {
      expect((await t.request('GET', path)).text, path).toContain(HIDDEN);
    }
  });

  for (const who of ['viewer', 'editor', 'viewer of two']) {
    it(`never name another tenant to a ${who}`, async () => {
      const leaks: string[] = [];
      for (const path of GLOBAL_READS) {
        const r = await t.request('GET', path, { token: scoped[who] });
        const headers = [...r.headers].map(([k, v]) => `${k}: ${v}`).join('\n');
        if (r.status >= 500) leaks.push(`${path}: ${r.status}`);
        if (r.text.includes(HIDDEN) && !r.text.includes(`tenant ${HIDDEN} does not exist`)) leaks.push(`${path} body`);
        if (headers.includes(HIDDEN)) leaks.push(`${path} headers`);
      }
      expect(leaks).toEqual([]);
    });
  }

  it('answer for another tenant exactly as for one that does not exist', async () => {
    for (const sub of ['', '/policy', '/tests', '/bundles', '/grants']) {
      const other = await t.request('GET', `/v1/tenants/${HIDDEN}${sub}`, { token: scoped.viewer });
      const none = await t.request('GET', `/v1/tenants/no-such-tenant${sub}`, { token: scoped.viewer });
      expect(other.status).toBe(404);
      expect(none.status).toBe(404);
      expect(other.text.replaceAll(HIDDEN, 'X').replace(/"requestId":"[^"]+"/, '')).toBe(
        none.text.replaceAll('no-such-tenant', 'X').replace(/"requestId":"[^"]+"/, ''),
      );
    }
  });
});
