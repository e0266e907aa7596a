// A client on IPv6 is handed a whole /64: rotating the low 64 bits gave it a fresh allowance of
// failed credentials (and of sign-in starts) with every request. The limiters count an IPv6 client
// by its /64, an IPv4 one by its address (IPv4-mapped IPv6 included).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureLimiter, clientKeyOf } from '../../server/auth/failure-limiter.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

const ALLOWANCE = 3;
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ settings: { authFailuresPerMinute: ALLOWANCE } });
});
afterAll(async () => t?.close());

const fromPeer = (peer: string, token: string) =>
  t.app.request(
    '/v1/tenants',
    { headers: { authorization: `Bearer ${token}` } },
    { incoming: { socket: { remoteAddress: peer }, headers: {}, readableEnded: true } },
  );

describe('unknown bearer tokens from rotating IPv6 addresses', () => {
  it('count against the /64: past the allowance 429, while another /64 and IPv4 clients are unaffected', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 7; i++) statuses.push((await fromPeer(`2001:db8:aa:bb::${i.toString(16)}:1`, `tg_wrong_${i}`)).status);
    expect(statuses).toEqual([...Array(ALLOWANCE).fill(401), ...Array(7 - ALLOWANCE).fill(429)]);
    expect((await fromPeer('2001:db8:aa:bb:ffff::9', 'tg_test_admin_token_0123456789abcdef')).status).toBe(429);
    expect((await fromPeer('2001:db8:aa:bc::1', 'tg_test_admin_token_0123456789abcdef')).status).toBe(200);
    expect((await fromPeer('192.0.2.10', 'tg_test_admin_token_0123456789abcdef')).status).toBe(200);
  });
});

describe('clientKeyOf', () => {
  it('keeps IPv4, folds IPv4-mapped IPv6 into it, and names an IPv6 client by its /64', () => {
    expect(clientKeyOf('192.0.2.1')).toBe('192.0.2.1');
    expect(clientKeyOf('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientKeyOf('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientKeyOf('2001:DB8:1:2::')).toBe('2001:db8:1:2::/64');
    expect(clientKeyOf('unknown')).toBe('unknown');
  });

  it('is what the limiter counts', () => {
    const limiter = new FailureLimiter(2);
    limiter.fail('2001:db8::1');
    limiter.fail('2001:db8::2');
    expect(limiter.retryAfter('2001:db8::3')).toBeGreaterThan(0);
    expect(limiter.retryAfter('2001:db8:0:1::3')).toBe(0);
  });
});
