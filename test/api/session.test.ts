import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatorFor } from '../../policy-schemas/index.ts';
import { ADMIN_TOKEN, type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

async function login(token: string) {
  const r = await t.request('POST', '/v1/session', { token: null, body: { token } });
  const cookie = r.headers.get('set-cookie') ?? '';
  return { r, cookie: cookie.split(';')[0], raw: cookie };
}

describe('console session', () => {
  it('logs in with a token and sets an HttpOnly SameSite=Strict cookie', async () => {
    const { r, raw } = await login(ADMIN_TOKEN);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ role: 'admin', tokenId: 'bootstrap-admin' });
    expect(r.json.csrfToken).toBeTruthy();
    expect(raw).toMatch(/HttpOnly/i);
    expect(raw).toMatch(/SameSite=Strict/i);
    expect(raw).toMatch(/Path=\//);
  });

  it('reads with the cookie, and needs the CSRF token to change anything', async () => {
    const { r, cookie } = await login(ADMIN_TOKEN);
    const read = await t.request('GET', '/v1/tools', { token: null, headers: { cookie } });
    expect(read.status).toBe(200);
    const noCsrf = await t.request('POST', '/v1/groups', { token: null, headers: { cookie }, body: { name: 'from-console' } });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.json.code).toBe('csrf');
    const wrong = await t.request('POST', '/v1/groups', { token: null, headers: { cookie, 'x-csrf-token': 'nope' }, body: { name: 'from-console' } });
    expect(wrong.status).toBe(403);
    const ok = await t.request('POST', '/v1/groups', { token: null, headers: { cookie, 'x-csrf-token': r.json.csrfToken }, body: { name: 'from-console' } });
    expect(ok.status).toBe(201);
    const me = await t.request('GET', '/v1/session', { token: null, headers: { cookie } });
    expect(me.json.csrfToken).toBe(r.json.csrfToken);
  });

  it('refuses a wrong token and runtime tokens', async () => {
    expect((await login('tg_nope')).r.status).toBe(401);
    const runtime = await t.tokenFor('runtime', ['acme-research']);
    expect((await login(runtime)).r.status).toBe(403);
    const bad = await t.request('POST', '/v1/session', { token: null, body: { tok: 1 } });
    expect(bad.status).toBe(400);
  });

  it('logs out: the cookie stops working', async () => {
    const { r, cookie } = await login(ADMIN_TOKEN);
    expect((await t.request('DELETE', '/v1/session', { token: null, headers: { cookie, 'x-csrf-token': r.json.csrfToken } })).status).toBe(204);
    expect((await t.request('GET', '/v1/tools', { token: null, headers: { cookie } })).status).toBe(401);
  });

  it('scopes a viewer session like the viewer token', async () => {
    const viewer = await t.tokenFor('viewer', ['acme-research']);
    const { r, cookie } = await login(viewer);
    expect(r.json).toMatchObject({ role: 'viewer', tenants: ['acme-research'] });
    expect((await t.request('GET', '/v1/tenants/globex-eng', { token: null, headers: { cookie } })).status).toBe(404);
  });
});

describe('what the session may do', () => {
  const validSession = validatorFor('session');

  it('answers the permissions of each role, on login and on GET, in the session schema', async () => {
    const editor = await t.tokenFor('editor', ['acme-research']);
    const auditor = await t.tokenFor('auditor');
    const viewer = await t.tokenFor('viewer', ['acme-research']);
    const answers = {
      admin: (await login(ADMIN_TOKEN)).r.json,
      editor: (await login(editor)).r.json,
      auditor: (await login(auditor)).r.json,
      viewer: (await login(viewer)).r.json,
    };
    for (const a of Object.values(answers)) expect(validSession(a), JSON.stringify(validSession.errors)).toBe(true);
    const { admin, editor: ed, auditor: au, viewer: vi } = answers;
    expect(admin.permissions.everyTenant).toBe(true);
    expect(admin.permissions.actions.inventory).toContain('write');
    expect(admin.permissions.actions.bundle).toContain('force');
    expect(ed.permissions.everyTenant).toBe(false);
    expect(ed.permissions.actions.inventory).toEqual(['read']);
    expect(ed.permissions.actions.policy).toEqual(expect.arrayContaining(['read', 'write']));
    expect(ed.permissions.actions.bundle).toContain('publish');
    expect(ed.permissions.actions.bundle).not.toContain('force');
    expect(ed.permissions.actions.audit).toBeUndefined();
    expect(au.permissions.everyTenant).toBe(true);
    expect(au.permissions.actions.audit).toEqual(expect.arrayContaining(['read', 'export']));
    expect(au.permissions.actions.policy).toEqual(['read']);
    expect(vi.permissions.actions.policy).toEqual(['read']);
    expect(vi.permissions.actions.decision).not.toContain('export');

    const { cookie } = await login(editor);
    const me = await t.request('GET', '/v1/session', { token: null, headers: { cookie } });
    expect(me.json.permissions).toEqual(ed.permissions);
  });

  it('says exactly what the API then allows', async () => {
    const editor = await t.tokenFor('editor', ['acme-research']);
    const { permissions } = (await login(editor)).r.json;
    const may = (resource: string, action: string) => (permissions.actions[resource] ?? []).includes(action);
    const group = await t.request('POST', '/v1/groups', { token: editor, body: { name: 'editor-made' } });
    expect(group.status === 403).toBe(!may('inventory', 'write'));
    const audit = await t.request('GET', '/v1/audit', { token: editor });
    expect(audit.status === 403).toBe(!may('audit', 'read'));
    const keys = await t.request('GET', '/v1/keys', { token: editor });
    expect(keys.status === 403).toBe(!may('key', 'read'));
    const forced = await t.request('POST', '/v1/tenants/acme-research/bundles', { token: editor, body: { reason: 'try', force: true } });
    expect(may('bundle', 'force')).toBe(false);
    expect(forced.status).toBe(403);
  });
});

describe('cookie over HTTPS', () => {
  it('marks the session cookie Secure when the request came through an HTTPS proxy', async () => {
    const r = await t.request('POST', '/v1/session', { token: null, body: { token: ADMIN_TOKEN }, headers: { 'x-forwarded-proto': 'https' } });
    expect(r.headers.get('set-cookie')).toMatch(/;\s*Secure/i);
    const plain = await t.request('POST', '/v1/session', { token: null, body: { token: ADMIN_TOKEN } });
    expect(plain.headers.get('set-cookie')).not.toMatch(/;\s*Secure/i);
  });
});
