// An account whose provider lets people type their own address signs in as `ceo@acme.test` without
// the provider vouching for it (`email_verified` false, absent, or the string "true"). That address
// must neither match an `email` mapping nor be written beside the person in the audit trail, nor be
// found by the audit filter; a verified one still does all three.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countedClaims } from '../../server/auth/sso/access.ts';
import { withEmailPair } from '../../server/auth/sso/oidc-client.ts';
import { SSO_CALLBACK, SSO_PUBLIC_URL, type TestUser, signInAtProvider, ssoSettingsFor, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

const CALLBACK = SSO_CALLBACK;
const CEO = 'ceo@acme.test';
const claimsCeo = (sub: string, emailVerified: TestUser['emailVerified']): TestUser => ({ sub, email: CEO, name: `Claims ${sub}`, groups: [], emailVerified });
const unverified = claimsCeo('typed-false', false);
const absent = claimsCeo('typed-absent', null);
const stringly = claimsCeo('typed-string', 'true');
const realCeo = claimsCeo('real-ceo', true);
// Signs in through a groups mapping, with an address typed in and not verified.
const staffer: TestUser = { sub: 'staffer-7', email: 'cfo@acme.test', name: 'Staffer Seven', groups: ['acme-editors'], emailVerified: false };

let op: Awaited<ReturnType<typeof startOidcProvider>>;
let t: TestApp;

beforeAll(async () => {
  op = await startOidcProvider({ users: [unverified, absent, stringly, realCeo, staffer], redirectUris: [CALLBACK] });
  t = await startTestApp({ settings: { sso: ssoSettingsFor(op.issuer, { recheckSeconds: 0 }) } });
  for (const body of [
    { id: 'ceo-is-admin', claim: 'email', value: CEO, role: 'admin' },
    { id: 'acme-editors', claim: 'groups', value: 'acme-editors', role: 'editor', tenants: ['acme-research'] },
  ]) {
    expect((await t.request('POST', '/v1/sso/mappings', { body })).status).toBe(201);
  }
});
afterAll(async () => {
  await t?.close();
  await op?.close();
});

type Browser = Map<string, string>;
async function get(b: Browser, path: string) {
  const res = await t.app.request(path, { headers: { cookie: [...b].map(([k, v]) => `${k}=${v}`).join('; ') } });
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair.indexOf('=');
    if (pair.slice(i + 1) === '' || /max-age=0/i.test(c)) b.delete(pair.slice(0, i));
    else b.set(pair.slice(0, i), pair.slice(i + 1));
  }
  return { status: res.status, text: await res.text(), location: res.headers.get('location') };
}
async function signIn(user: TestUser): Promise<{ b: Browser; status: number; text: string }> {
  const b: Browser = new Map();
  const start = await get(b, '/v1/session/sso/start');
  expect(start.status).toBe(302);
  const back = await signInAtProvider(start.location as string, user.sub, CALLBACK);
  const cb = await get(b, back.slice(SSO_PUBLIC_URL.length));
  return { b, status: cb.status, text: cb.text };
}
const auditByActor = async (who: string) => (await t.request('GET', `/v1/audit?actor=${encodeURIComponent(who)}`)).json.items as Record<string, unknown>[];

describe('an unverified email claim', () => {
  for (const [how, user] of [
    ['email_verified false', unverified],
    ['email_verified absent', absent],
    ['email_verified the string "true"', stringly],
  ] as const) {
    it(`does not match an email mapping (${how}): refused, no admin session`, async () => {
      const r = await signIn(user);
      expect(r.status).toBe(403);
      expect(r.text).toContain('Your account has no access');
      expect((await get(r.b, '/v1/session')).status).toBe(401);
      // The refusal is audited under the subject, without the address it claimed.
      const [event] = await auditByActor(`user:${user.sub}`);
      expect(event).toMatchObject({ action: 'refuse', actorEmail: null, actorName: user.name });
    });
  }

  it('matches once the provider verifies it: the same address gets the admin session', async () => {
    const r = await signIn(realCeo);
    expect(r.status).toBe(200);
    const me = JSON.parse((await get(r.b, '/v1/session')).text);
    expect(me).toMatchObject({ role: 'admin', user: { id: `user:${realCeo.sub}`, email: CEO } });
  });

  it('is never written beside the person in hashed audit events, nor found by the audit filter', async () => {
    const r = await signIn(staffer);
    expect(r.status).toBe(200);
    const me = JSON.parse((await get(r.b, '/v1/session')).text);
    expect(me).toMatchObject({ role: 'editor', user: { id: `user:${staffer.sub}`, email: null } });
    const policy = await t.app.request('/v1/tenants/acme-research/policy', { headers: { cookie: [...r.b].map(([k, v]) => `${k}=${v}`).join('; ') } });
    const write = await t.app.request('/v1/tenants/acme-research/policy', {
      method: 'PUT',
      headers: {
        cookie: [...r.b].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/json',
        'if-match': policy.headers.get('etag') as string,
        'x-csrf-token': me.csrfToken,
      },
      body: JSON.stringify({ ...(await policy.json()), bundleTtlSeconds: 1800 }),
    });
    expect(write.status).toBe(200);
    const [event] = await auditByActor(`user:${staffer.sub}`);
    expect(event).toMatchObject({ entityType: 'policy', actorEmail: null });
    expect(await auditByActor(staffer.email)).toEqual([]);
  });

  it('is dropped from a session opened before the rule, on its next change', async () => {
    const r = await signIn(staffer);
    expect(r.status).toBe(200);
    // What older code stored: the typed address beside the session.
    await t.deps.database.db.updateTable('sessions').set({ user_email: staffer.email }).where('user_sub', '=', staffer.sub).execute();
    const cookie = [...r.b].map(([k, v]) => `${k}=${v}`).join('; ');
    const me = JSON.parse((await get(r.b, '/v1/session')).text);
    expect(me.user.email).toBeNull();
    const policy = await t.app.request('/v1/tenants/acme-research/policy', { headers: { cookie } });
    const write = await t.app.request('/v1/tenants/acme-research/policy', {
      method: 'PUT',
      headers: { cookie, 'content-type': 'application/json', 'if-match': policy.headers.get('etag') as string, 'x-csrf-token': me.csrfToken },
      body: JSON.stringify({ ...(await policy.json()), bundleTtlSeconds: 2400 }),
    });
    expect(write.status).toBe(200);
    expect(await auditByActor(staffer.email)).toEqual([]);
  });

  it('does not borrow a verified flag from userinfo for the address the ID token carries', () => {
    const merged = withEmailPair({ email: 'me@home.test', email_verified: true }, { sub: 's', email: CEO });
    expect(merged).toMatchObject({ email: CEO });
    expect(merged.email_verified).toBeUndefined();
    expect(countedClaims(merged).email).toBeUndefined();
    expect(withEmailPair({ email: CEO, email_verified: true }, { sub: 's' })).toMatchObject({ email: CEO, email_verified: true });
    expect(withEmailPair({ email_verified: true }, { sub: 's', email: CEO, email_verified: false }).email_verified).toBe(false);
  });

  it('does not count in the mapping preview either', async () => {
    const r = await t.request('POST', '/v1/sso/mappings/preview', { body: { claims: { sub: 'x', email: CEO, email_verified: false } } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ access: false });
  });
});
