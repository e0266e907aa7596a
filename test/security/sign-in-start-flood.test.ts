// Unauthenticated `GET /v1/session/sso/start` from one client used to fill the store of pending
// sign-ins (10,000 rows, ten minutes each) so that everyone else got 503. Starts are now limited
// per client address (an IPv6 client by its /64, behind trusted proxies by X-Forwarded-For), and
// one client holds at most its share of the store, across replicas sharing the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTrustedProxies } from '../../server/http/client-address.ts';
import type { SsoSettings } from '../../server/auth/sso/oidc-client.ts';
import { recordSignIn } from '../../server/auth/sso/pending-sign-ins.ts';
import { startClientOf } from '../../server/auth/sso/start-limit.ts';
import { CLIENT_ID, CLIENT_SECRET, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

const PUBLIC_URL = 'http://127.0.0.1:9';
const ALLOWANCE = 3;
let op: Awaited<ReturnType<typeof startOidcProvider>>;
let sso: SsoSettings;
let t: TestApp;

beforeAll(async () => {
  op = await startOidcProvider({ users: [], redirectUris: [`${PUBLIC_URL}/v1/session/sso/callback`] });
  sso = { issuer: op.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, publicUrl: PUBLIC_URL };
  t = await startTestApp({ settings: { sso, authFailuresPerMinute: ALLOWANCE } });
});
afterAll(async () => {
  await t?.close();
  await op?.close();
});

/** A start as the listener hands it over: the TCP peer is `peer`. */
async function start(app: TestApp, peer: string, headers: Record<string, string> = {}) {
  const res = await app.app.request('/v1/session/sso/start', { headers }, { incoming: { socket: { remoteAddress: peer }, headers: {}, readableEnded: true } });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
}
const pendingOf = async (app: TestApp, client: string) =>
  Number(
    (
      await app.deps.database.db
        .selectFrom('sso_logins')
        .select((e) => e.fn.countAll().as('n'))
        .where('client_address', '=', client)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('a flood of sign-in starts', () => {
  it('from one address is refused with 429 and Retry-After after its allowance; other addresses still start', async () => {
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof start>> | undefined;
    for (let i = 0; i < 12; i++) {
      last = await start(t, '198.51.100.7');
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...Array(ALLOWANCE).fill(302), ...Array(12 - ALLOWANCE).fill(429)]);
    expect(Number(last?.retryAfter)).toBeGreaterThan(0);
    expect(last?.text).toContain('Too many sign-ins started');
    expect(await pendingOf(t, '198.51.100.7')).toBe(ALLOWANCE);
    expect((await start(t, '198.51.100.8')).status).toBe(302);
    // The same client over IPv4-mapped IPv6 (a dual-stack listener) is the same client.
    expect((await start(t, '::ffff:198.51.100.7')).status).toBe(429);
  });

  it('rotating IPv6 addresses inside one /64 counts as one client', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 8; i++) statuses.push((await start(t, `2001:db8:7:1::${i.toString(16)}`)).status);
    expect(statuses).toEqual([...Array(ALLOWANCE).fill(302), ...Array(8 - ALLOWANCE).fill(429)]);
    expect((await start(t, '2001:db8:7:2::1')).status).toBe(302);
    expect(startClientOf('2001:db8:7:1:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:7:1::/64');
  });

  it('rotating X-Forwarded-For without trusted proxies gains nothing; behind a trusted proxy each client counts alone', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await start(t, '203.0.113.50', { 'x-forwarded-for': `192.0.2.${i}` })).status);
    expect(statuses).toEqual([...Array(ALLOWANCE).fill(302), ...Array(6 - ALLOWANCE).fill(429)]);

    const proxied = await startTestApp({ settings: { sso, authFailuresPerMinute: ALLOWANCE, trustedProxies: parseTrustedProxies('10.0.0.0/8') } });
    try {
      const one: number[] = [];
      for (let i = 0; i < 5; i++) one.push((await start(proxied, '10.1.2.3', { 'x-forwarded-for': '192.0.2.66' })).status);
      expect(one).toEqual([...Array(ALLOWANCE).fill(302), ...Array(5 - ALLOWANCE).fill(429)]);
      expect((await start(proxied, '10.1.2.3', { 'x-forwarded-for': '192.0.2.67' })).status).toBe(302);
    } finally {
      await proxied.close();
    }
  });

  it('cannot hold more than its share of the store, even through other replicas', async () => {
    // Sign-ins this client already started on other replicas (each replica limits only its own starts).
    const now = new Date();
    for (let i = 0; i < 2 * ALLOWANCE; i++) {
      const r = await recordSignIn(t.deps.database, {
        state: `elsewhere-${i}`,
        nonce: 'n',
        codeVerifier: 'v',
        address: '198.51.100.99',
        now,
        seconds: 600,
        limits: { perAddress: 2 * ALLOWANCE, total: 10_000 },
      });
      expect(r.ok).toBe(true);
    }
    const refused = await start(t, '198.51.100.99');
    expect(refused.status).toBe(429);
    // Room comes back when the oldest of them expires, ten minutes after it started.
    expect(Number(refused.retryAfter)).toBeGreaterThan(590);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(600);
    expect(await pendingOf(t, '198.51.100.99')).toBe(2 * ALLOWANCE);
    expect((await start(t, '198.51.100.100')).status).toBe(302);
  });

  it('leaves room for others when the store is shared by many clients: full only for the whole store', async () => {
    const limits = { perAddress: 2, total: 5 };
    const db = t.deps.database;
    const put = (address: string, i: number) =>
      recordSignIn(db, { state: `share-${address}-${i}`, nonce: 'n', codeVerifier: 'v', address, now: new Date(), seconds: 600, limits });
    const filled = await db.db
      .selectFrom('sso_logins')
      .select((e) => e.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const room = { ...limits, total: Number(filled.n) + limits.total };
    const putIn = (address: string, i: number) =>
      recordSignIn(db, { state: `room-${address}-${i}`, nonce: 'n', codeVerifier: 'v', address, now: new Date(), seconds: 600, limits: room });
    expect([(await putIn('a', 1)).ok, (await putIn('a', 2)).ok]).toEqual([true, true]);
    const third = await putIn('a', 3);
    expect(third).toMatchObject({ ok: false, full: 'address' });
    expect(!third.ok && third.full === 'address' && third.retryAfter > 590 && third.retryAfter <= 600).toBe(true);
    expect((await putIn('b', 1)).ok).toBe(true);
    expect(await put('c', 1)).toEqual({ ok: false, full: 'store' });
  });

  it('forgets expired sign-ins, so a client gets its share back after they lapse', async () => {
    const limits = { perAddress: 1, total: 10_000 };
    const old = new Date(Date.now() - 11 * 60_000);
    const db = t.deps.database;
    expect((await recordSignIn(db, { state: 'lapsed', nonce: 'n', codeVerifier: 'v', address: 'lapsing', now: old, seconds: 600, limits })).ok).toBe(true);
    expect((await recordSignIn(db, { state: 'fresh', nonce: 'n', codeVerifier: 'v', address: 'lapsing', now: new Date(), seconds: 600, limits })).ok).toBe(
      true,
    );
  });
});
