import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseTrustedProxies } from '../../server/http/client-address.ts';
import { ADMIN_TOKEN, type TestApp, startTestApp } from '../support/harness.ts';

// 300 wrong guesses in 1.5 s all went through: nothing limited failed sign-ins or bearer tokens.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ seed: false });
});
afterAll(async () => t.close());
afterEach(() => vi.useRealTimers());

let nextAddress = 1;
/** A fresh client address per test, as the TCP peer the Node server reports. */
const newAddress = () => `198.51.100.${nextAddress++}`;

async function from(address: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown, app: TestApp = t) {
  const env = { incoming: { socket: { remoteAddress: address }, headers: {}, readableEnded: true } };
  const res = await app.app.request(
    path,
    { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined },
    env,
  );
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json().catch(() => undefined)) as any };
}

const guess = (i: number) => `tg_${String(i).padStart(43, 'x')}`;

describe('failed credentials are rate limited per client address', () => {
  it('answers 429 with Retry-After to a burst of wrong bearer tokens', async () => {
    const me = newAddress();
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof from>> | undefined;
    for (let i = 0; i < 300; i++) {
      last = await from(me, 'GET', '/v1/tools', { authorization: `Bearer ${guess(i)}` });
      statuses.push(last.status);
    }
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(20);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(280);
    expect(Number(last!.retryAfter)).toBeGreaterThan(0);
    expect(last!.json).toMatchObject({ code: 'rate_limited', status: 429 });
  });

  it('limits wrong sign-ins to the console the same way', async () => {
    const me = newAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await from(me, 'POST', '/v1/session', {}, { token: guess(i) })).status);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20).every((s) => s === 429)).toBe(true);
  });

  it('counts malformed Authorization headers as failures too', async () => {
    const me = newAddress();
    for (let i = 0; i < 20; i++) expect((await from(me, 'GET', '/v1/tools', { authorization: `Basic ${i}` })).status).toBe(401);
    expect((await from(me, 'GET', '/v1/tools', { authorization: 'Basic x' })).status).toBe(429);
  });

  it('gives even the right token a 429 from a limited address, so a hit cannot be told from a miss', async () => {
    const me = newAddress();
    for (let i = 0; i < 25; i++) await from(me, 'GET', '/v1/tools', { authorization: `Bearer ${guess(i)}` });
    expect((await from(me, 'GET', '/v1/tools', { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(429);
    expect((await from(me, 'POST', '/v1/session', {}, { token: ADMIN_TOKEN })).status).toBe(429);
  });

  it('cannot be used to lock a legitimate token out from another address', async () => {
    const attacker = newAddress();
    const admin = newAddress();
    for (let i = 0; i < 100; i++) await from(attacker, 'GET', '/v1/tools', { authorization: `Bearer ${guess(i)}` });
    // The attacker even presents the admin's real token: it is the address that is limited, not the token.
    await from(attacker, 'GET', '/v1/tools', { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect((await from(admin, 'GET', '/v1/tools', { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(200);
    expect((await from(admin, 'POST', '/v1/session', {}, { token: ADMIN_TOKEN })).status).toBe(200);
  });

  it('never limits a client that makes many successful calls', async () => {
    const me = newAddress();
    for (let i = 0; i < 400; i++) expect((await from(me, 'GET', '/v1/groups', { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(200);
    // Nor one whose few typos sit among them.
    for (let i = 0; i < 5; i++) expect((await from(me, 'GET', '/v1/groups', { authorization: `Bearer ${guess(i)}` })).status).toBe(401);
    expect((await from(me, 'GET', '/v1/groups', { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(200);
  });

  it('lets the address try again once Retry-After has passed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const me = newAddress();
    let limited: Awaited<ReturnType<typeof from>> | undefined;
    for (let i = 0; i < 30; i++) limited = await from(me, 'GET', '/v1/tools', { authorization: `Bearer ${guess(i)}` });
    expect(limited!.status).toBe(429);
    vi.setSystemTime(Date.now() + Number(limited!.retryAfter) * 1000);
    expect((await from(me, 'GET', '/v1/tools', { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(200);
  });
});

// Behind a load balancer every client's TCP peer is the balancer: limiting by peer would let one
// attacker lock every runtime out. The operator names the balancers; their X-Forwarded-For counts.
describe('behind trusted load balancers', () => {
  let lb: TestApp;
  beforeAll(async () => {
    lb = await startTestApp({ seed: false, settings: { trustedProxies: parseTrustedProxies('10.0.0.0/8, fd00::/8') } });
  });
  afterAll(async () => lb.close());
  const balancer = '10.1.2.3';
  const via = (client: string, token: string, chain?: string) =>
    from(balancer, 'GET', '/v1/tools', { authorization: `Bearer ${token}`, 'x-forwarded-for': chain ?? client }, undefined, lb);

  it('limits the client the balancer names, not every client behind it', async () => {
    for (let i = 0; i < 30; i++) await via('203.0.113.7', guess(i));
    expect((await via('203.0.113.7', ADMIN_TOKEN)).status).toBe(429);
    expect((await via('203.0.113.8', ADMIN_TOKEN)).status).toBe(200);
    // Node reports IPv4 peers on a dual-stack socket as IPv4-mapped IPv6: still the trusted balancer.
    expect(
      (await from(`::ffff:${balancer}`, 'GET', '/v1/tools', { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-forwarded-for': '203.0.113.9' }, undefined, lb))
        .status,
    ).toBe(200);
  });

  it('takes the right-most untrusted hop: what the client wrote to the left cannot dodge the limit', async () => {
    for (let i = 0; i < 30; i++) await via('', guess(i), `192.0.2.${i}, 203.0.113.20, 10.9.9.9`);
    expect((await via('', ADMIN_TOKEN, '192.0.2.200, 203.0.113.20')).status).toBe(429);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted balancer', async () => {
    const direct = '198.51.100.200';
    for (let i = 0; i < 30; i++) {
      await from(direct, 'GET', '/v1/tools', { authorization: `Bearer ${guess(i)}`, 'x-forwarded-for': `192.0.2.${i}` }, undefined, lb);
    }
    expect((await from(direct, 'GET', '/v1/tools', { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-forwarded-for': '192.0.2.250' }, undefined, lb)).status).toBe(
      429,
    );
  });

  it('refuses a TOOLGATE_TRUSTED_PROXIES entry that is no address or range, naming it', () => {
    expect(parseTrustedProxies(' 10.0.0.1, 192.168.0.0/16 ::1 ')).toHaveLength(3);
    expect(() => parseTrustedProxies('10.0.0.0/8, lb.internal')).toThrow(/lb\.internal is not an IP address or a CIDR range/);
  });
});

describe('without trusted balancers', () => {
  it('never believes X-Forwarded-For: rotating it does not dodge the limit', async () => {
    const me = newAddress();
    for (let i = 0; i < 30; i++) await from(me, 'GET', '/v1/tools', { authorization: `Bearer ${guess(i)}`, 'x-forwarded-for': `192.0.2.${i}` });
    expect((await from(me, 'GET', '/v1/tools', { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-forwarded-for': '192.0.2.99' })).status).toBe(429);
  });
});
