// Without TOOLGATE_TRUSTED_PROXIES, a client writing a new X-Forwarded-For (or X-Real-IP, or
// Forwarded) on every request must stay one client to the failed-credential limiter: over a real
// listener, on fresh connections, for bearer tokens, console sign-ins and the conditional pulls the
// listener answers itself.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerHash } from '../../server/auth/authenticate.ts';
import { ADMIN_TOKEN, type LiveServer, startLiveServer } from '../distribution/live-server.ts';
import { makeKey, makeSignedBundle } from '../distribution/signed-bundles.ts';

const ALLOWANCE = 4;
let srv: LiveServer;
let runtime: string;
let etag: string;

beforeAll(async () => {
  srv = await startLiveServer({ settings: { authFailuresPerMinute: ALLOWANCE } });
  await srv.createTenant('acme');
  runtime = await srv.tokenFor('runtime', ['acme']);
  const signed = await makeSignedBundle({ tenant: 'acme', version: 1 }, await makeKey('k1'));
  await srv.place('acme', 1, { ...signed, revision: signed.bundle.revision });
  etag = `"${signed.bundle.revision}"`;
});
afterAll(async () => srv?.dispose());

/** One request on its own connection; status and Retry-After. */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: srv.port, method, path, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Headers that claim the request came from client number `i`, each a different address. */
const claimedClient = (i: number) => ({
  'x-forwarded-for': `192.0.2.${i}, 198.51.100.${i}`,
  'x-real-ip': `203.0.113.${i}`,
  forwarded: `for=203.0.113.${i}`,
});

/** How many pulls the listener answered itself (read off the metric: /metrics, like every route, is held back here). */
async function answeredByListener(): Promise<number> {
  return (await srv.deps.metrics.listenerPullAnswers.get()).values[0]?.value ?? 0;
}

const guess = (i: number) => `tg_${String(i).padStart(43, 'g')}`;

describe('rotating forwarded headers with no trusted proxy configured', () => {
  it('does not buy wrong guesses more allowance: the right token then gets 429 too, on every route', async () => {
    // The runtime's token lookup and the bundle cached, so the listener could answer its pull itself.
    const pullHeaders = { authorization: `Bearer ${runtime}`, 'if-none-match': etag };
    expect((await send('GET', '/v1/tenants/acme/bundles/latest', pullHeaders)).status).toBe(304);
    const statuses: number[] = [];
    for (let i = 0; i < ALLOWANCE + 6; i++) {
      const wrongBearer = await send('GET', '/v1/tools', { authorization: `Bearer ${guess(i)}`, ...claimedClient(i) });
      const wrongSignIn = await send(
        'POST',
        '/v1/session',
        { 'content-type': 'application/json', ...claimedClient(100 + i) },
        JSON.stringify({ token: guess(i) }),
      );
      statuses.push(wrongBearer.status, wrongSignIn.status);
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(ALLOWANCE);
    expect(statuses.filter((s) => s === 429)).toHaveLength(statuses.length - ALLOWANCE);

    const rightToken = await send('GET', '/v1/tools', { authorization: `Bearer ${ADMIN_TOKEN}`, ...claimedClient(200) });
    expect(rightToken.status).toBe(429);
    expect(Number(rightToken.retryAfter)).toBeGreaterThan(0);
    const rightSignIn = await send(
      'POST',
      '/v1/session',
      { 'content-type': 'application/json', ...claimedClient(201) },
      JSON.stringify({ token: ADMIN_TOKEN }),
    );
    expect(rightSignIn.status).toBe(429);
    // A conditional pull the listener would answer 304 from memory is held back as well. The
    // token's lookup is cached again first (the app, which 429s, would not look it up), so only
    // the limiter stands between this pull and the listener's 304.
    await srv.deps.tokens.find(bearerHash(pullHeaders.authorization)!);
    const answered = await answeredByListener();
    const pull = await send('GET', '/v1/tenants/acme/bundles/latest', { ...pullHeaders, ...claimedClient(202) });
    expect(pull.status).toBe(429);
    const pullWithoutHeaders = await send('GET', '/v1/tenants/acme/bundles/latest', pullHeaders);
    expect(pullWithoutHeaders.status).toBe(429);
    expect(await answeredByListener()).toBe(answered);
    // A minute on, the address has its allowance back and the same pull is the listener's 304.
    srv.deps.failureLimiter.retryAfter('127.0.0.1', Date.now() + 61_000);
    await srv.deps.tokens.find(bearerHash(pullHeaders.authorization)!);
    expect((await send('GET', '/v1/tenants/acme/bundles/latest', { ...pullHeaders, ...claimedClient(203) })).status).toBe(304);
    expect(await answeredByListener()).toBe(answered + 1);
  });
});
