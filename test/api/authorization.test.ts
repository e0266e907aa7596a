import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
const tokens: Record<string, string> = {};
beforeAll(async () => {
  t = await startTestApp();
  tokens.editor = await t.tokenFor('editor', ['acme-research']);
  tokens.viewer = await t.tokenFor('viewer', ['acme-research']);
  tokens.auditor = await t.tokenFor('auditor');
  tokens.runtime = await t.tokenFor('runtime', ['acme-research']);
  tokens.admin2 = await t.tokenFor('admin');
});
afterAll(async () => t.close());

type Role = 'admin2' | 'editor' | 'viewer' | 'auditor' | 'runtime';
const roles: Role[] = ['admin2', 'editor', 'viewer', 'auditor', 'runtime'];

// Each row: a request and, per role, the status it must get. Writes are incomplete (bad body or
// no If-Match: 400/428) so an allowed write shows without changing anything.
const matrix: { name: string; method: string; path: string; body?: unknown; expect: Record<Role, number> }[] = [
  { name: 'list tools', method: 'GET', path: '/v1/tools', expect: { admin2: 200, editor: 200, viewer: 200, auditor: 200, runtime: 403 } },
  { name: 'create tool', method: 'POST', path: '/v1/tools', body: {}, expect: { admin2: 400, editor: 403, viewer: 403, auditor: 403, runtime: 403 } },
  { name: 'list groups', method: 'GET', path: '/v1/groups', expect: { admin2: 200, editor: 200, viewer: 200, auditor: 200, runtime: 403 } },
  { name: 'create state', method: 'POST', path: '/v1/states', body: {}, expect: { admin2: 400, editor: 403, viewer: 403, auditor: 403, runtime: 403 } },
  { name: 'list tenants', method: 'GET', path: '/v1/tenants', expect: { admin2: 200, editor: 200, viewer: 200, auditor: 200, runtime: 403 } },
  { name: 'create tenant', method: 'POST', path: '/v1/tenants', body: {}, expect: { admin2: 400, editor: 403, viewer: 403, auditor: 403, runtime: 403 } },
  {
    name: 'read own policy',
    method: 'GET',
    path: '/v1/tenants/acme-research/policy',
    expect: { admin2: 200, editor: 200, viewer: 200, auditor: 200, runtime: 403 },
  },
  {
    name: 'write own policy',
    method: 'PUT',
    path: '/v1/tenants/acme-research/policy',
    body: { roles: 1 },
    expect: { admin2: 428, editor: 428, viewer: 403, auditor: 403, runtime: 403 },
  },
  { name: 'read other tenant', method: 'GET', path: '/v1/tenants/globex-eng', expect: { admin2: 200, editor: 404, viewer: 404, auditor: 200, runtime: 404 } },
  {
    name: 'read other policy',
    method: 'GET',
    path: '/v1/tenants/globex-eng/policy',
    expect: { admin2: 200, editor: 404, viewer: 404, auditor: 200, runtime: 404 },
  },
  {
    name: 'write other policy',
    method: 'PUT',
    path: '/v1/tenants/globex-eng/policy',
    body: { roles: 1 },
    expect: { admin2: 428, editor: 404, viewer: 404, auditor: 403, runtime: 404 },
  },
  {
    name: 'list other grants',
    method: 'GET',
    path: '/v1/tenants/globex-eng/grants',
    expect: { admin2: 200, editor: 404, viewer: 404, auditor: 200, runtime: 404 },
  },
  {
    name: 'create own grant',
    method: 'POST',
    path: '/v1/tenants/acme-research/grants',
    body: {},
    expect: { admin2: 400, editor: 400, viewer: 403, auditor: 403, runtime: 403 },
  },
  { name: 'list tokens', method: 'GET', path: '/v1/tokens', expect: { admin2: 200, editor: 403, viewer: 403, auditor: 200, runtime: 403 } },
  { name: 'create token', method: 'POST', path: '/v1/tokens', body: {}, expect: { admin2: 400, editor: 403, viewer: 403, auditor: 403, runtime: 403 } },
  { name: 'read audit', method: 'GET', path: '/v1/audit', expect: { admin2: 200, editor: 403, viewer: 403, auditor: 200, runtime: 403 } },
  { name: 'export audit', method: 'GET', path: '/v1/audit/export', expect: { admin2: 200, editor: 403, viewer: 403, auditor: 200, runtime: 403 } },
  { name: 'verify audit', method: 'GET', path: '/v1/audit/verify', expect: { admin2: 200, editor: 403, viewer: 403, auditor: 200, runtime: 403 } },
  {
    name: 'open an approval request',
    method: 'POST',
    path: '/v1/tenants/acme-research/approvals',
    body: {},
    expect: { admin2: 400, editor: 403, viewer: 403, auditor: 403, runtime: 400 },
  },
  {
    name: 'list approval requests',
    method: 'GET',
    path: '/v1/tenants/acme-research/approvals',
    expect: { admin2: 200, editor: 200, viewer: 200, auditor: 200, runtime: 403 },
  },
  {
    name: 'approve a call',
    method: 'POST',
    path: '/v1/tenants/acme-research/approvals/00000000-0000-4000-8000-000000000000/approve',
    body: {},
    expect: { admin2: 400, editor: 400, viewer: 403, auditor: 403, runtime: 403 },
  },
];

describe('role × route authorization', () => {
  for (const row of matrix) {
    for (const role of roles) {
      it(`${role} → ${row.name}: ${row.expect[role]}`, async () => {
        const r = await t.request(row.method, row.path, { token: tokens[role], body: row.body });
        expect(r.status).toBe(row.expect[role]);
        if (r.status >= 400) expect(r.headers.get('content-type')).toContain('application/problem+json');
      });
    }
  }

  it('answers 401 without a token, with a wrong token and with a malformed header', async () => {
    expect((await t.request('GET', '/v1/tools', { token: null })).status).toBe(401);
    expect((await t.request('GET', '/v1/tools', { token: 'tg_wrong' })).status).toBe(401);
    const r = await t.request('GET', '/v1/tools', { token: null, headers: { authorization: 'Basic abc' } });
    expect(r.status).toBe(401);
    expect(r.json.code).toBe('unauthorized');
  });

  it('shows a tenant-scoped token only its own tenants in lists', async () => {
    const r = await t.request('GET', '/v1/tenants', { token: tokens.viewer });
    expect(r.json.items.map((x: { id: string }) => x.id)).toEqual(['acme-research']);
  });

  it('gives the same 404 for another tenant that exists and one that does not', async () => {
    const exists = await t.request('GET', '/v1/tenants/globex-eng/policy', { token: tokens.editor });
    const missing = await t.request('GET', '/v1/tenants/no-such-tenant/policy', { token: tokens.editor });
    expect(exists.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(exists.json.detail.replace('globex-eng', 'X')).toBe(missing.json.detail.replace('no-such-tenant', 'X'));
  });
});

describe('tokens', () => {
  it('shows the secret once, lists without it, stores only a hash, and revokes', async () => {
    const r = await t.request('POST', '/v1/tokens', { body: { label: 'ci bot', role: 'viewer', tenants: ['globex-eng'] } });
    expect(r.status).toBe(201);
    expect(r.json.token).toMatch(/^tg_/);
    const list = await t.request('GET', '/v1/tokens');
    expect(list.text).not.toContain(r.json.token);
    const row = await t.deps.database.db.selectFrom('tokens').selectAll().where('id', '=', r.json.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(r.json.token);
    expect((await t.request('GET', '/v1/tenants/globex-eng', { token: r.json.token })).status).toBe(200);
    expect((await t.request('DELETE', `/v1/tokens/${r.json.id}`, { headers: { 'if-match': r.headers.get('etag')! } })).status).toBe(204);
    expect((await t.request('GET', '/v1/tenants/globex-eng', { token: r.json.token })).status).toBe(401);
    const audit = await t.request('GET', `/v1/audit?entityType=token&entityId=${r.json.id}`);
    expect(audit.json.items.map((e: { action: string }) => e.action)).toEqual(['create', 'delete']);
    expect(audit.text).not.toContain(r.json.token);
  });

  it('records when a token was last used', async () => {
    const r = await t.request('POST', '/v1/tokens', { body: { label: 'used', role: 'auditor' } });
    const before = (await t.request('GET', '/v1/tokens')).json.items.find((x: { id: string }) => x.id === r.json.id);
    expect(before.lastUsedAt).toBeNull();
    await t.request('GET', '/v1/tools', { token: r.json.token });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const after = (await t.request('GET', '/v1/tokens')).json.items.find((x: { id: string }) => x.id === r.json.id);
    expect(Date.parse(after.lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it.each([
    [{ label: 'x', role: 'editor' }, '/tenants'],
    [{ label: 'x', role: 'runtime', tenants: ['acme-research', 'globex-eng'] }, '/tenants'],
    [{ label: 'x', role: 'admin', tenants: ['acme-research'] }, '/tenants'],
    [{ label: 'x', role: 'viewer', tenants: ['nope'] }, '/tenants/0'],
    [{ label: 'x', role: 'superuser' }, '/role'],
  ])('rejects an ill-scoped token request %j', async (body, pointer) => {
    const r = await t.request('POST', '/v1/tokens', { body });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe(pointer);
  });
});
