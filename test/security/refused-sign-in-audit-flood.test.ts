// A person no mapping lets in (or a script holding their provider session) retrying the sign-in
// wrote one hashed audit event per attempt, without limit. A refused sign-in is now audited at most
// once per subject a minute, decided in the database so replicas sharing it agree; every attempt
// is still refused with the same page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSAL_AUDIT_WINDOW_MS, claimRefusalAudit } from '../../server/auth/sso/refusal-audit.ts';
import { SSO_CALLBACK, SSO_PUBLIC_URL, type TestUser, signInAtProvider, ssoSettingsFor, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

const CALLBACK = SSO_CALLBACK;
const mallory: TestUser = { sub: 'mallory-retries', email: 'mallory@example.com', name: 'Mallory', groups: ['contractors'] };
const eve: TestUser = { sub: 'eve-once', email: 'eve@example.com', name: 'Eve', groups: ['contractors'] };

let op: Awaited<ReturnType<typeof startOidcProvider>>;
let t: TestApp;

beforeAll(async () => {
  op = await startOidcProvider({ users: [mallory, eve], redirectUris: [CALLBACK] });
  t = await startTestApp({ settings: { sso: ssoSettingsFor(op.issuer) } });
});
afterAll(async () => {
  await t?.close();
  await op?.close();
});

/** One whole sign-in from a fresh browser (on its own address, so the start limit stays out of the way). */
let browsers = 0;
async function signIn(user: TestUser): Promise<number> {
  const env = { incoming: { socket: { remoteAddress: `198.18.0.${++browsers}` }, headers: {}, readableEnded: true } };
  const jar = new Map<string, string>();
  const call = async (path: string) => {
    const res = await t.app.request(path, { headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } }, env);
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return res;
  };
  const start = await call('/v1/session/sso/start');
  const back = await signInAtProvider(start.headers.get('location') as string, user.sub, CALLBACK);
  const cb = await call(back.slice(SSO_PUBLIC_URL.length));
  expect(await cb.text()).toContain('Your account has no access');
  return cb.status;
}
const refusals = async (user: TestUser) => (await t.request('GET', `/v1/audit?action=refuse&actor=${encodeURIComponent(`user:${user.sub}`)}`)).json.items;

describe('refused sign-ins, repeated', () => {
  it('are each refused, and audited once per subject a minute', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push(await signIn(mallory));
    expect(statuses).toEqual([403, 403, 403, 403, 403]);
    expect(await refusals(mallory)).toHaveLength(1);
  });

  it('do not hide another subject refused in the same minute', async () => {
    expect(await signIn(eve)).toBe(403);
    expect(await refusals(eve)).toHaveLength(1);
    expect(await refusals(mallory)).toHaveLength(1);
  });

  it('are audited again once the minute has passed', async () => {
    // The minute passes: the subject's last audited refusal is now older than the window.
    const past = new Date(Date.now() - REFUSAL_AUDIT_WINDOW_MS - 1000).toISOString();
    await t.deps.database.db.updateTable('sso_refusals').set({ audited_at: past }).execute();
    expect(await signIn(mallory)).toBe(403);
    expect(await signIn(mallory)).toBe(403);
    expect(await refusals(mallory)).toHaveLength(2);
  });

  it('are audited once when two replicas refuse the same subject at the same moment', async () => {
    const db = t.deps.database;
    const now = new Date();
    const claims = await Promise.all([0, 1, 2, 3].map(() => db.change((tx) => claimRefusalAudit(tx, 'racing-subject', now))));
    expect(claims.filter(Boolean)).toHaveLength(1);
  });
});
