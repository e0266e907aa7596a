import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SsoSettings } from '../../server/auth/sso/oidc-client.ts';
import { freePort } from '../support/free-port.ts';
import { CLIENT_ID, SSO_CALLBACK, SSO_PUBLIC_URL, signInAtProvider, ssoSettingsFor, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// Single sign-on against a real OpenID provider on loopback. Toolgate is driven in process; the
// provider is reached over HTTP, by Toolgate (discovery, token, userinfo) and by the "browser".
const PUBLIC_URL = SSO_PUBLIC_URL;
const CALLBACK = SSO_CALLBACK;
const alice = { sub: 'alice-0001', email: 'alice@example.com', name: 'Alice Example', groups: ['acme-editors', 'staff'] };
const mallory = { sub: 'mallory-0002', email: 'mallory@example.com', name: 'Mallory Outsider', groups: ['contractors'] };
// A mapped account whose provider sends U+0000 in its name (PostgreSQL's text cannot hold it).
const nully = { sub: 'nully-0003', email: 'nully@example.com', name: 'Nul\u0000Name', groups: ['acme-editors'] };

let op: Awaited<ReturnType<typeof startOidcProvider>>;
let t: TestApp;
let sso: SsoSettings;

beforeAll(async () => {
  op = await startOidcProvider({ users: [alice, mallory, nully], redirectUris: [CALLBACK] });
  sso = ssoSettingsFor(op.issuer, { recheckSeconds: 0 });
  t = await startTestApp({ settings: { sso } });
  const r = await t.request('POST', '/v1/sso/mappings', {
    body: { id: 'acme-editors', claim: 'groups', value: 'acme-editors', role: 'editor', tenants: ['acme-research'] },
  });
  expect(r.status).toBe(201);
});

afterAll(async () => {
  await t?.close();
  await op?.close();
});

type Browser = { cookies: Map<string, string> };
const newBrowser = (): Browser => ({ cookies: new Map() });
const cookieHeader = (b: Browser) => [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
function keepCookies(b: Browser, res: Response) {
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair.indexOf('=');
    const value = pair.slice(i + 1);
    if (value === '' || /max-age=0/i.test(c)) b.cookies.delete(pair.slice(0, i));
    else b.cookies.set(pair.slice(0, i), value);
  }
}
async function get(b: Browser, path: string, headers: Record<string, string> = {}) {
  const res = await t.app.request(path, { headers: { cookie: cookieHeader(b), ...headers } });
  keepCookies(b, res);
  return { status: res.status, location: res.headers.get('location'), text: await res.text(), headers: res.headers };
}
async function startSignIn(b: Browser): Promise<string> {
  const r = await get(b, '/v1/session/sso/start');
  expect(r.status).toBe(302);
  return r.location as string;
}
/** Start → the provider's login and consent → the callback URL the provider sends the browser to. */
async function throughProvider(b: Browser, login: string): Promise<string> {
  return signInAtProvider(await startSignIn(b), login, CALLBACK);
}
const pathOf = (url: string) => url.slice(PUBLIC_URL.length);
const sessionCount = async () =>
  Number(
    (
      await t.deps.database.db
        .selectFrom('sessions')
        .select((e) => e.fn.countAll().as('n'))
        .where('user_sub', 'is not', null)
        .executeTakeFirstOrThrow()
    ).n,
  );
const auditCount = async () =>
  Number(
    (
      await t.deps.database.db
        .selectFrom('audit_events')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('single sign-on', () => {
  let sessionsBefore = 0;
  let eventsBefore = 0;
  beforeEach(async () => {
    sessionsBefore = await sessionCount();
    eventsBefore = await auditCount();
  });

  it('signs a mapped person in with the same session cookie and CSRF protection as token sign-in', async () => {
    const b = newBrowser();
    const start = await get(b, '/v1/session/sso/start');
    const auth = new URL(start.location as string);
    expect(auth.origin).toBe(op.issuer);
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.searchParams.get('state')).toBeTruthy();
    expect(auth.searchParams.get('nonce')).toBeTruthy();
    expect(auth.searchParams.get('redirect_uri')).toBe(CALLBACK);

    const back = await signInAtProvider(auth.href, alice.sub, CALLBACK);
    const cb = await get(b, pathOf(back));
    expect(cb.status).toBe(200);
    expect(cb.text).toContain('Signed in');
    expect(cb.headers.get('set-cookie')).toMatch(/toolgate_session=[^;]+;.*HttpOnly.*SameSite=Strict/i);

    const me = JSON.parse((await get(b, '/v1/session')).text);
    expect(me).toMatchObject({
      tokenId: null,
      role: 'editor',
      tenants: ['acme-research'],
      tenantRoles: { 'acme-research': 'editor' },
      user: { id: `user:${alice.sub}`, email: alice.email, name: alice.name },
    });

    // Changes need the CSRF token, as with token sign-in.
    const policy = await t.app.request('/v1/tenants/acme-research/policy', { headers: { cookie: cookieHeader(b) } });
    const etag = policy.headers.get('etag') as string;
    const body = await policy.json();
    const write = (csrf?: string) =>
      t.app.request('/v1/tenants/acme-research/policy', {
        method: 'PUT',
        headers: { cookie: cookieHeader(b), 'content-type': 'application/json', 'if-match': etag, ...(csrf ? { 'x-csrf-token': csrf } : {}) },
        body: JSON.stringify({ ...body, bundleTtlSeconds: 3600 }),
      });
    expect((await write()).status).toBe(403);
    expect((await write(me.csrfToken)).status).toBe(200);

    // Another tenant: out of reach, as for a tenant-scoped token.
    expect((await get(b, '/v1/tenants/globex-eng/policy')).status).toBe(404);

    // The change is Alice's in the audit trail, findable by her id or her email.
    for (const actor of [`user:${alice.sub}`, alice.email]) {
      const r = await t.request('GET', `/v1/audit?entityType=policy&actor=${encodeURIComponent(actor)}`);
      expect(r.json.items).toHaveLength(1);
      expect(r.json.items[0]).toMatchObject({ actor: `user:${alice.sub}`, actorEmail: alice.email, actorName: alice.name, tenant: 'acme-research' });
    }
    const csv = await t.request('GET', `/v1/audit/export?format=csv&actor=${encodeURIComponent(alice.email)}`);
    expect(csv.text).toContain(`"user:${alice.sub}"`);
    expect(csv.text).toContain(`"${alice.email}","${alice.name}"`);
    expect((await t.request('GET', '/v1/audit/verify')).json.ok).toBe(true);
  });

  it('refuses a person no mapping matches with a page, audited, and no session', async () => {
    const b = newBrowser();
    const cb = await get(b, pathOf(await throughProvider(b, mallory.sub)));
    expect(cb.status).toBe(403);
    expect(cb.headers.get('content-type')).toMatch(/text\/html/);
    expect(cb.text).toContain('Your account has no access');
    expect(cb.headers.get('set-cookie') ?? '').not.toMatch(/toolgate_session=[^;]/);
    expect(await sessionCount()).toBe(sessionsBefore);
    const r = await t.request('GET', `/v1/audit?action=refuse&actor=${encodeURIComponent(mallory.email)}`);
    expect(r.json.items).toEqual([
      expect.objectContaining({
        actor: `user:${mallory.sub}`,
        actorName: mallory.name,
        entityType: 'session',
        reason: 'no single sign-on mapping matches this account',
      }),
    ]);
  });

  it('refuses a wrong state, a replayed callback and one from another browser: a page, no session, nothing changed', async () => {
    const b = newBrowser();
    const back = new URL(await throughProvider(b, alice.sub));

    const forged = new URL(back);
    forged.searchParams.set('state', 'not-the-state-toolgate-sent');
    const wrong = await get(b, pathOf(forged.href));
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('Sign-in link used or expired');

    const elsewhere = await get(newBrowser(), pathOf(back.href));
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.text).toContain('started in another browser');
    // That attempt used the sign-in up: a replay in the right browser is refused too.
    const replay = await get(b, pathOf(back.href));
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('Sign-in link used or expired');

    const missing = await get(b, '/v1/session/sso/callback?code=abc');
    expect(missing.status).toBe(400);
    expect(await sessionCount()).toBe(sessionsBefore);
    expect(await auditCount()).toBe(eventsBefore);
  });

  it('refuses the second use of a callback that already signed someone in', async () => {
    const b = newBrowser();
    const back = await throughProvider(b, alice.sub);
    expect((await get(b, pathOf(back))).status).toBe(200);
    const sessions = await sessionCount();
    const replay = await get(b, pathOf(back));
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('Sign-in link used or expired');
    expect(await sessionCount()).toBe(sessions);
  });

  for (const [tamper, words] of [
    ['wrong-nonce', /nonce is not the one this sign-in sent/],
    ['expired', /ID token has expired/],
    ['foreign-audience', /issued for another application/],
    ['foreign-issuer', /issued by another provider/],
    ['forged-signature', /signature does not verify against the identity provider&#39;s published keys/],
    ['alg-none', /signature does not verify against the identity provider&#39;s published keys/],
    ['unknown-kid', /signature does not verify against the identity provider&#39;s published keys/],
    ['forged-unknown-kid', /signature does not verify against the identity provider&#39;s published keys/],
    ['hs256-client-secret', /signature does not verify against the identity provider&#39;s published keys/],
  ] as const) {
    it(`refuses an ID token that is ${tamper}: a page, no session, nothing changed`, async () => {
      const b = newBrowser();
      const back = await throughProvider(b, alice.sub);
      op.tamperNextIdToken(tamper);
      const cb = await get(b, pathOf(back));
      expect(cb.status).toBe(400);
      expect(cb.text).toContain('Sign-in could not be verified');
      expect(cb.text).toMatch(words);
      expect(cb.headers.get('set-cookie') ?? '').not.toMatch(/toolgate_session=[^;]/);
      expect(await sessionCount()).toBe(sessionsBefore);
      expect(await auditCount()).toBe(eventsBefore);
    });
  }

  it('refuses claims holding a NUL character with a page naming the claim: no session, nothing changed', async () => {
    const b = newBrowser();
    const cb = await get(b, pathOf(await throughProvider(b, nully.sub)));
    expect(cb.status).toBe(400);
    expect(cb.text).toContain('Sign-in could not be verified');
    expect(cb.text).toMatch(/NUL character \(U\+0000\) at \/name/);
    expect(cb.headers.get('set-cookie') ?? '').not.toMatch(/toolgate_session=[^;]/);
    expect(await sessionCount()).toBe(sessionsBefore);
    expect(await auditCount()).toBe(eventsBefore);
  });

  it('counts forged callbacks as failed sign-ins: past the limit a 429 page with Retry-After', async () => {
    const limited = await startTestApp({ settings: { sso, authFailuresPerMinute: 2 } });
    try {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 3; i++) {
        last = await limited.app.request(`/v1/session/sso/callback?code=x&state=forged-${i}`);
        statuses.push(last.status);
      }
      expect(statuses).toEqual([400, 400, 429]);
      expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await last?.text()).toContain('Too many failed sign-ins');
    } finally {
      await limited.close();
    }
  });

  it('answers an unreachable provider with a page, never a 500', async () => {
    const down = await startTestApp({ settings: { sso: { ...sso, issuer: `http://127.0.0.1:${await freePort()}` } } });
    try {
      const res = await down.app.request('/v1/session/sso/start');
      expect(res.status).toBe(502);
      expect(await res.text()).toContain('Identity provider unreachable');
    } finally {
      await down.close();
    }
  });

  it('answers a provider that goes away between the redirect and the callback with a page, no session', async () => {
    const other = await startOidcProvider({ users: [alice], redirectUris: [CALLBACK] });
    const app = await startTestApp({ settings: { sso: { ...sso, issuer: other.issuer } } });
    try {
      const b = newBrowser();
      const res = await app.app.request('/v1/session/sso/start');
      keepCookies(b, res);
      const back = await signInAtProvider(res.headers.get('location') as string, alice.sub, CALLBACK);
      await other.close();
      const cb = await app.app.request(pathOf(back), { headers: { cookie: cookieHeader(b) } });
      expect(cb.status).toBe(502);
      expect(await cb.text()).toContain('could not be reached to finish the sign-in');
      expect(cb.headers.get('set-cookie') ?? '').not.toMatch(/toolgate_session=[^;]/);
      expect(await app.deps.database.db.selectFrom('sessions').selectAll().where('user_sub', 'is not', null).execute()).toEqual([]);
    } finally {
      await app.close();
      await other.close().catch(() => undefined);
    }
  });

  it('ends a session within the recheck when the mapping that gave access is removed, and on sign-out', async () => {
    const m = await t.request('POST', '/v1/sso/mappings', {
      body: { id: 'staff-viewers', claim: 'groups', value: 'staff', role: 'viewer', tenants: ['globex-eng'] },
    });
    expect(m.status).toBe(201);
    const b = newBrowser();
    expect((await get(b, pathOf(await throughProvider(b, alice.sub)))).status).toBe(200);
    const me = JSON.parse((await get(b, '/v1/session')).text);
    expect(me.tenantRoles).toEqual({ 'acme-research': 'editor', 'globex-eng': 'viewer' });
    // The session says, per tenant, what the API then allows.
    expect(me.permissions.tenants['acme-research'].policy).toEqual(expect.arrayContaining(['read', 'write']));
    expect(me.permissions.tenants['globex-eng'].policy).toEqual(['read']);
    // Viewer of globex: reads its policy, cannot change it.
    expect((await get(b, '/v1/tenants/globex-eng/policy')).status).toBe(200);
    const put = await t.app.request('/v1/tenants/globex-eng/policy', {
      method: 'PUT',
      headers: { cookie: cookieHeader(b), 'content-type': 'application/json', 'if-match': '"1"', 'x-csrf-token': me.csrfToken },
      body: JSON.stringify({ roles: {}, bindings: {} }),
    });
    expect(put.status).toBe(403);

    // Narrowed: the staff mapping goes, globex with it; acme stays.
    expect((await t.request('DELETE', '/v1/sso/mappings/staff-viewers', { headers: { 'if-match': m.headers.get('etag') as string } })).status).toBe(204);
    expect((await get(b, '/v1/tenants/globex-eng/policy')).status).toBe(404);
    expect((await get(b, '/v1/tenants/acme-research/policy')).status).toBe(200);

    // Sign-out ends it here and sends the person on to the provider's end-session endpoint.
    const out = await t.app.request('/v1/session', { method: 'DELETE', headers: { cookie: cookieHeader(b), 'x-csrf-token': me.csrfToken } });
    expect(out.status).toBe(200);
    const { endSessionUrl } = (await out.json()) as { endSessionUrl: string };
    expect(endSessionUrl.startsWith(`${op.issuer}/session/end`)).toBe(true);
    expect(new URL(endSessionUrl).searchParams.get('client_id')).toBe(CLIENT_ID);
    expect((await get(b, '/v1/session')).status).toBe(401);
  });

  it('lets an auditor mapping read everything while an editor mapping still edits its tenant', async () => {
    const m = await t.request('POST', '/v1/sso/mappings', { body: { id: 'staff-auditors', claim: 'groups', value: 'staff', role: 'auditor' } });
    expect(m.status).toBe(201);
    try {
      const b = newBrowser();
      expect((await get(b, pathOf(await throughProvider(b, alice.sub)))).status).toBe(200);
      const me = JSON.parse((await get(b, '/v1/session')).text);
      expect(me).toMatchObject({ role: 'auditor', tenants: [], tenantRoles: { 'acme-research': 'editor' } });
      expect(me.permissions).toMatchObject({ everyTenant: true, actions: { policy: ['read'], token: ['read'] } });
      // An editor tenant keeps the auditor's reading and export there, and adds editing.
      expect(me.permissions.tenants['acme-research'].policy).toEqual(['read', 'write']);
      expect(me.permissions.tenants['acme-research'].decision).toEqual(expect.arrayContaining(['read', 'export']));
      const put = async (tenant: string) => {
        const current = await t.app.request(`/v1/tenants/${tenant}/policy`, { headers: { cookie: cookieHeader(b) } });
        expect(current.status).toBe(200);
        return t.app.request(`/v1/tenants/${tenant}/policy`, {
          method: 'PUT',
          headers: {
            cookie: cookieHeader(b),
            'content-type': 'application/json',
            'if-match': current.headers.get('etag') as string,
            'x-csrf-token': me.csrfToken,
          },
          body: JSON.stringify({ ...((await current.json()) as object), bundleTtlSeconds: 4321 }),
        });
      };
      expect((await put('acme-research')).status).toBe(200);
      expect((await put('globex-eng')).status).toBe(403);
      expect((await get(b, '/v1/audit/verify')).status).toBe(200);
      expect((await get(b, '/v1/tokens')).status).toBe(200);
      const create = await t.app.request('/v1/tokens', {
        method: 'POST',
        headers: { cookie: cookieHeader(b), 'content-type': 'application/json', 'x-csrf-token': me.csrfToken },
        body: JSON.stringify({ label: 'x', role: 'admin' }),
      });
      expect(create.status).toBe(403);
    } finally {
      const current = await t.request('GET', '/v1/sso/mappings/staff-auditors');
      await t.request('DELETE', '/v1/sso/mappings/staff-auditors', { headers: { 'if-match': current.headers.get('etag') as string } });
    }
  });

  it("ends a person's session at the idle and the absolute limit, like a token session", async () => {
    for (const column of ['expires_at', 'created_at'] as const) {
      const b = newBrowser();
      expect((await get(b, pathOf(await throughProvider(b, alice.sub)))).status).toBe(200);
      expect((await get(b, '/v1/session')).status).toBe(200);
      const longAgo = new Date(Date.now() - 24 * 3600 * 1000).toISOString();
      await t.deps.database.db
        .updateTable('sessions')
        .set({ [column]: longAgo })
        .where('user_sub', '=', alice.sub)
        .execute();
      expect((await get(b, '/v1/session')).status).toBe(401);
      expect(await sessionCount()).toBe(sessionsBefore);
    }
  });

  it('signs a person out on their next request once no mapping gives them access', async () => {
    const b = newBrowser();
    expect((await get(b, pathOf(await throughProvider(b, alice.sub)))).status).toBe(200);
    expect((await get(b, '/v1/session')).status).toBe(200);
    const current = await t.request('GET', '/v1/sso/mappings/acme-editors');
    expect((await t.request('DELETE', '/v1/sso/mappings/acme-editors', { headers: { 'if-match': current.headers.get('etag') as string } })).status).toBe(204);
    const after = await get(b, '/v1/session');
    expect(after.status).toBe(401);
    expect(after.text).toContain('no longer has access');
    expect(await sessionCount()).toBe(sessionsBefore);
    const again = await t.request('POST', '/v1/sso/mappings', {
      body: { id: 'acme-editors', claim: 'groups', value: 'acme-editors', role: 'editor', tenants: ['acme-research'] },
    });
    expect(again.status).toBe(201);
  });
});

describe('/v1/sso/mappings', () => {
  it('is for admins; changes are versioned with If-Match and audited', async () => {
    const editor = await t.tokenFor('editor', ['acme-research']);
    const body = { id: 'platform-admins', claim: 'groups', value: 'platform-admins', role: 'admin' };
    expect((await t.request('POST', '/v1/sso/mappings', { token: editor, body })).status).toBe(403);
    expect((await t.request('GET', '/v1/sso/mappings', { token: editor })).status).toBe(403);
    const created = await t.request('POST', '/v1/sso/mappings', { body });
    expect(created.status).toBe(201);
    expect((await t.request('POST', '/v1/sso/mappings', { body })).status).toBe(409);
    const etag = created.headers.get('etag') as string;
    expect((await t.request('PATCH', '/v1/sso/mappings/platform-admins', { body: { value: 'root' } })).status).toBe(428);
    const patched = await t.request('PATCH', '/v1/sso/mappings/platform-admins', { body: { value: 'root' }, headers: { 'if-match': etag } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ value: 'root', version: 2 });
    expect((await t.request('DELETE', '/v1/sso/mappings/platform-admins', { headers: { 'if-match': etag } })).status).toBe(412);
    const events = await t.request('GET', '/v1/audit?entityType=sso-mapping&entityId=platform-admins');
    expect(events.json.items.map((e: { action: string }) => e.action)).toEqual(['create', 'update']);
    expect(events.json.items[1]).toMatchObject({ before: { value: 'platform-admins' }, after: { value: 'root' } });
    expect((await t.request('DELETE', '/v1/sso/mappings/platform-admins', { headers: { 'if-match': patched.headers.get('etag') as string } })).status).toBe(
      204,
    );
  });

  it('names a mapping sent without an id after its role and value, as DESIGN gives a mapping', async () => {
    const body = { claim: 'groups', value: 'Platform Admins', role: 'admin' };
    const first = await t.request('POST', '/v1/sso/mappings', { body });
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ id: 'admin-platform-admins', ...body, version: 1 });
    expect(first.headers.get('location')).toBe('/v1/sso/mappings/admin-platform-admins');
    // The same words again get the next free name rather than a conflict.
    const second = await t.request('POST', '/v1/sso/mappings', { body: { ...body, value: 'platform-admins' } });
    expect(second.status).toBe(201);
    expect(second.json.id).toBe('admin-platform-admins-2');
    const events = await t.request('GET', '/v1/audit?entityType=sso-mapping&entityId=admin-platform-admins&action=create');
    expect(events.json.items[0].after).toMatchObject({ id: 'admin-platform-admins', value: 'Platform Admins' });
    // A body that is bad apart from the id is still refused by pointer, and stores nothing.
    const bad = await t.request('POST', '/v1/sso/mappings', { body: { claim: 'groups', value: 'devs', role: 'editor' } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/tenants']);
    expect((await t.request('GET', '/v1/sso/mappings/editor-devs')).status).toBe(404);
    for (const r of [first, second]) {
      const id = r.json.id as string;
      expect((await t.request('DELETE', `/v1/sso/mappings/${id}`, { headers: { 'if-match': r.headers.get('etag') as string } })).status).toBe(204);
    }
  });

  it('refuses bad mappings with pointers and stores nothing', async () => {
    const before = (await t.request('GET', '/v1/sso/mappings')).json.items.length;
    const cases: [unknown, string][] = [
      [{ id: 'x', claim: 'groups', value: 'devs', role: 'editor' }, '/tenants'],
      [{ id: 'x', claim: 'groups', value: 'ops', role: 'admin', tenants: ['acme-research'] }, '/tenants'],
      [{ id: 'x', claim: 'groups', value: 'devs', role: 'viewer', tenants: ['no-such-tenant'] }, '/tenants/0'],
      [{ id: 'x', claim: 'groups', value: 'bots', role: 'runtime', tenants: ['acme-research'] }, '/role'],
      [{ id: 'x', claim: 'has space', value: 'v', role: 'auditor' }, '/claim'],
      [{ id: 'Bad Id', claim: 'groups', value: 'v', role: 'auditor' }, '/id'],
      [{ id: 'x', claim: 'groups', value: '', role: 'auditor' }, '/value'],
    ];
    for (const [body, pointer] of cases) {
      const r = await t.request('POST', '/v1/sso/mappings', { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/problem\+json/);
      expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    }
    expect((await t.request('GET', '/v1/sso/mappings')).json.items.length).toBe(before);
  });

  it('previews what pasted claims would get', async () => {
    const r = await t.request('POST', '/v1/sso/mappings/preview', { body: { claims: { sub: 'x', groups: ['acme-editors'] } } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ access: true, role: 'editor', tenants: ['acme-research'], mappings: ['acme-editors'] });
    expect((await t.request('POST', '/v1/sso/mappings/preview', { body: { claims: { groups: ['nobody'] } } })).json.access).toBe(false);
    expect((await t.request('POST', '/v1/sso/mappings/preview', { body: { claims: 'groups' } })).status).toBe(400);
  });
});
