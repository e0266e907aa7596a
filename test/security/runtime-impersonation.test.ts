import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../policy-schemas/types.gen.ts';
import { createDecisionLog } from '../../runtime/client/decision-log.ts';
import { hashSecret } from '../../server/auth/tokens.ts';
import { ADMIN_TOKEN, type TestApp, startTestApp } from '../support/harness.ts';
import { decisionRecord } from '../support/decision-records.ts';

// Any runtime token of a tenant could post decisions and status under another runtime's id, and
// records dated a day ahead outlived (and under a low cap evicted) every genuine record. A
// runtimeId now belongs to the token that first reported it (403 runtime_id_taken for any other),
// and records more than 5 minutes ahead of the server's clock are refused.

const tenant = 'acme-research';
const base = `/v1/tenants/${tenant}`;
let t: TestApp;
let tokenA: string;
let tokenB: string;
let n = 0;

beforeAll(async () => {
  t = await startTestApp();
  tokenA = await t.tokenFor('runtime', [tenant]);
  tokenB = await t.tokenFor('runtime', [tenant]);
});
afterAll(async () => t.close());

const rec = (over: Partial<DecisionRecord> = {}) => decisionRecord({ at: new Date(Date.now() - 1000).toISOString(), toolCallId: `call-${++n}`, ...over });

async function postDecisions(token: string, runtimeId: string, records: DecisionRecord[]) {
  const res = await t.app.request(`${base}/decisions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(Buffer.from(JSON.stringify({ runtimeId, records }))),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}
const postStatus = (token: string, runtimeId: string, health: 'fresh' | 'stale' | 'none' = 'fresh') =>
  t.request('POST', `${base}/runtimes/status`, { token, body: { runtimeId, version: null, health } });
const storedIds = async (runtimeId: string) =>
  ((await t.request('GET', `${base}/decisions?runtimeId=${runtimeId}&limit=1000`)).json.items as { toolCallId: string }[]).map((i) => i.toolCallId);
const fleet = async () => {
  const r = await t.request('GET', `${base}/runtimes`);
  return Object.fromEntries((r.json.runtimes as { runtimeId: string; health: string }[]).map((x) => [x.runtimeId, x.health]));
};

describe('a runtime reports only as itself', () => {
  it('decisions under an id another token first reported with: 403 runtime_id_taken naming /runtimeId, nothing stored', async () => {
    const mine = rec();
    expect((await postDecisions(tokenA, 'edge-1', [mine])).status).toBe(202);
    const forged = rec({ decision: 'deny' });
    const r = await postDecisions(tokenB, 'edge-1', [forged]);
    expect(r.status).toBe(403);
    expect(r.json.code).toBe('runtime_id_taken');
    expect(r.json.errors[0].pointer).toBe('/runtimeId');
    expect(await storedIds('edge-1')).toEqual([mine.toolCallId]);
  });

  it('status under an id another token first reported with: 403, and the fleet view keeps the genuine report', async () => {
    expect((await postStatus(tokenA, 'edge-2', 'fresh')).status).toBe(204);
    const r = await postStatus(tokenB, 'edge-2', 'none');
    expect(r.status).toBe(403);
    expect(r.json.code).toBe('runtime_id_taken');
    expect((await fleet())['edge-2']).toBe('fresh');
  });

  it('one id across both routes: claimed by a status report, decisions from another token are refused', async () => {
    expect((await postStatus(tokenA, 'edge-3')).status).toBe(204);
    expect((await postDecisions(tokenB, 'edge-3', [rec()])).status).toBe(403);
  });

  it('one id across both routes: claimed by decisions, a status report from another token is refused', async () => {
    expect((await postDecisions(tokenB, 'edge-4', [rec()])).status).toBe(202);
    expect((await postStatus(tokenA, 'edge-4', 'stale')).status).toBe(403);
  });

  it("the SDK's decision log under a taken id counts its records rejected instead of retrying them forever", async () => {
    expect((await postStatus(tokenA, 'edge-sdk')).status).toBe(204);
    const fetchApp = (async (url: string, init: RequestInit) => t.app.request(new URL(url).pathname, init)) as unknown as typeof fetch;
    const log = createDecisionLog({ url: 'http://toolgate.test', tenant, token: tokenB, runtimeId: 'edge-sdk', fetch: fetchApp, flushIntervalMs: 3_600_000 });
    log.record(rec());
    log.record(rec());
    await log.flush();
    expect(log.stats()).toMatchObject({ shipped: 0, rejected: 2, buffered: 0 });
    expect(log.stats().lastError).toMatch(/403/);
    expect(await storedIds('edge-sdk')).toEqual([]);
    await log.close();
  });

  it('an admin token cannot report as a runtime either', async () => {
    expect((await postStatus(tokenA, 'edge-5')).status).toBe(204);
    expect((await postStatus(ADMIN_TOKEN, 'edge-5', 'none')).status).toBe(403);
    expect((await postDecisions(ADMIN_TOKEN, 'edge-5', [rec()])).status).toBe(403);
  });

  it('the owner keeps reporting, and two tokens keep their own ids', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await postStatus(tokenA, 'own-a')).status).toBe(204);
      expect((await postStatus(tokenB, 'own-b')).status).toBe(204);
      expect((await postDecisions(tokenA, 'own-a', [rec()])).status).toBe(202);
      expect((await postDecisions(tokenB, 'own-b', [rec()])).status).toBe(202);
    }
  });

  it("a rotated token takes over the id once the owner's token is revoked", async () => {
    const old = await t.tokenFor('runtime', [tenant]);
    const next = await t.tokenFor('runtime', [tenant]);
    expect((await postStatus(old, 'rotating')).status).toBe(204);
    expect((await postStatus(next, 'rotating')).status).toBe(403);
    const oldId = (await t.deps.database.db.selectFrom('tokens').select('id').where('token_hash', '=', hashSecret(old)).executeTakeFirstOrThrow()).id;
    const row = await t.request('GET', `/v1/tokens/${oldId}`);
    expect((await t.request('DELETE', `/v1/tokens/${oldId}`, { headers: { 'if-match': row.headers.get('etag')! } })).status).toBe(204);
    expect((await postStatus(next, 'rotating')).status).toBe(204);
    expect((await postDecisions(next, 'rotating', [rec()])).status).toBe(202);
  });

  it('ownership is per tenant: the same id in another tenant belongs to that tenant’s token', async () => {
    const globex = await t.tokenFor('runtime', ['globex-eng']);
    expect((await postStatus(tokenA, 'shared-name')).status).toBe(204);
    const r = await t.request('POST', '/v1/tenants/globex-eng/runtimes/status', {
      token: globex,
      body: { runtimeId: 'shared-name', version: null, health: 'fresh' },
    });
    expect(r.status).toBe(204);
  });
});

describe('records dated ahead of the server are refused', () => {
  for (const [name, aheadMs] of [
    ['a day ahead', 86_400_000 - 60_000],
    ['an hour ahead', 3_600_000],
    ['ten minutes ahead', 600_000],
    ['six minutes ahead', 360_000],
  ] as const) {
    it(`${name}: 400 naming /records/1/at, nothing of the batch stored`, async () => {
      const good = rec();
      const r = await postDecisions(tokenA, 'clock-a', [good, rec({ at: new Date(Date.now() + aheadMs).toISOString() })]);
      expect(r.status).toBe(400);
      expect(r.json.errors[0].pointer).toBe('/records/1/at');
      expect(r.json.errors[0].message).toMatch(/5 minutes ahead/);
      expect(await storedIds('clock-a')).not.toContain(good.toolCallId);
    });
  }

  it('a record within the 5 minutes of clock skew is stored', async () => {
    const skewed = rec({ at: new Date(Date.now() + 4 * 60_000).toISOString() });
    expect((await postDecisions(tokenA, 'clock-a', [skewed])).status).toBe(202);
    expect(await storedIds('clock-a')).toContain(skewed.toolCallId);
  });
});
