import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { DecisionBatch, DecisionRecord } from '../../policy-schemas/types.gen.ts';
import { validate } from '../../policy-schemas/index.ts';
import { makeBundle } from '../../test/distribution/signed-bundles.ts';
import { createView, decide } from '../decide.ts';
import { loadBundle } from '../load-bundle.ts';
import { createDecisionLog, type DecisionLog, type DecisionLogOptions } from './decision-log.ts';

const open: DecisionLog[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
});

/** A stand-in server for the decisions endpoint: records every batch, or fails while `down`. */
function fakeIngest() {
  const s = { down: false, status: 202, batches: [] as DecisionBatch[], headers: [] as Headers[], attempts: 0 };
  const fetchFn = (async (_url: string | URL | Request, init?: RequestInit) => {
    s.attempts++;
    if (s.down) throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
    const headers = new Headers(init?.headers);
    s.headers.push(headers);
    const body = JSON.parse(gunzipSync(init!.body as Uint8Array).toString('utf8')) as DecisionBatch;
    if (s.status === 202) s.batches.push(body);
    return new Response(s.status === 202 ? null : JSON.stringify({ detail: 'bad record' }), { status: s.status });
  }) as typeof fetch;
  return { s, fetchFn };
}

/** `fetchFn` whose first post is held until `release()`; `away()` says whether it is being held. */
function holdFirstPost(fetchFn: typeof fetch) {
  let release: (() => void) | undefined;
  let holdNext = true;
  const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    if (holdNext) {
      holdNext = false;
      await new Promise<void>((r) => (release = r));
    }
    return fetchFn(url, init);
  }) as typeof globalThis.fetch;
  return { fetch, away: () => release !== undefined, release: () => release?.() };
}

function makeLog(fetchFn: typeof fetch, extra: Partial<DecisionLogOptions> = {}): DecisionLog {
  const log = createDecisionLog({
    url: 'http://toolgate.test/',
    tenant: 'acme',
    token: 'tg_runtime',
    runtimeId: 'worker-1',
    flushIntervalMs: 60_000,
    fetch: fetchFn,
    ...extra,
  });
  open.push(log);
  return log;
}

function record(i: number): DecisionRecord {
  return {
    at: new Date(1_700_000_000_000 + i).toISOString(),
    toolCallId: `call-${i}`,
    subject: 'agent:bot',
    groups: ['default'],
    state: 'undefined',
    tool: 'core__search',
    decision: 'allow',
    bundleVersion: 3,
  };
}

const shippedIds = (batches: DecisionBatch[]) => batches.flatMap((b) => b.records.map((r) => r.toolCallId));

describe('decision log', () => {
  it('ships buffered records gzip-compressed with the runtime token, and the batch passes the server schema', async () => {
    const { s, fetchFn } = fakeIngest();
    const log = makeLog(fetchFn);
    for (let i = 0; i < 5; i++) log.record(record(i));
    expect(log.stats()).toMatchObject({ buffered: 5, dropped: 0, shipped: 0 });
    await log.flush();
    expect(s.batches).toHaveLength(1);
    expect(s.headers[0].get('authorization')).toBe('Bearer tg_runtime');
    expect(s.headers[0].get('content-encoding')).toBe('gzip');
    expect(validate('decision-batch', s.batches[0]).ok).toBe(true);
    expect(shippedIds(s.batches)).toEqual(['call-0', 'call-1', 'call-2', 'call-3', 'call-4']);
    expect(log.stats()).toMatchObject({ buffered: 0, dropped: 0, shipped: 5 });
  });

  it('drops the oldest records when the ring is full, counts them, and sends the count with the next batch', async () => {
    const { s, fetchFn } = fakeIngest();
    s.down = true;
    const log = makeLog(fetchFn, { capacity: 4 });
    for (let i = 0; i < 10; i++) log.record(record(i));
    expect(log.stats()).toMatchObject({ buffered: 4, dropped: 6 });
    s.down = false;
    await log.flush();
    expect(shippedIds(s.batches)).toEqual(['call-6', 'call-7', 'call-8', 'call-9']);
    expect(s.batches[0].dropped).toBe(6);
  });

  it('keeps a batch the server could not take and ships it, before newer records, once the server is back', async () => {
    const { s, fetchFn } = fakeIngest();
    const log = makeLog(fetchFn, { capacity: 10 });
    for (let i = 0; i < 3; i++) log.record(record(i));
    s.down = true;
    await log.flush();
    expect(log.stats()).toMatchObject({ buffered: 3, shipped: 0 });
    expect(log.stats().lastError).toMatch(/cannot reach the server/);
    log.record(record(3));
    s.down = false;
    await log.flush();
    expect(shippedIds(s.batches)).toEqual(['call-0', 'call-1', 'call-2', 'call-3']);
    expect(log.stats()).toMatchObject({ buffered: 0, shipped: 4, lastError: null });
  });

  it('while a batch is away, newer records overflowing the ring push out the oldest of that batch when it comes back', async () => {
    const { s, fetchFn } = fakeIngest();
    const held = holdFirstPost(fetchFn);
    const log = makeLog(held.fetch, { capacity: 4 });
    for (let i = 0; i < 3; i++) log.record(record(i));
    s.down = true;
    const away = log.flush();
    await expect.poll(() => held.away()).toBe(true);
    for (let i = 3; i < 6; i++) log.record(record(i));
    held.release();
    await away;
    // Room for one of the three that came back: the newest of them.
    expect(log.stats()).toMatchObject({ buffered: 4, dropped: 2 });
    s.down = false;
    await log.flush();
    expect(shippedIds(s.batches)).toEqual(['call-2', 'call-3', 'call-4', 'call-5']);
  });

  it('ships on its own once the ring is half full, without waiting for the interval', async () => {
    const { s, fetchFn } = fakeIngest();
    const log = makeLog(fetchFn, { capacity: 8, flushIntervalMs: 3_600_000 });
    for (let i = 0; i < 4; i++) log.record(record(i));
    await expect.poll(() => shippedIds(s.batches).length, { timeout: 5_000 }).toBe(4);
  });

  it('keeps records that come in while a batch is away for the next batch, instead of posting them right after', async () => {
    const { s, fetchFn } = fakeIngest();
    const held = holdFirstPost(fetchFn);
    const log = makeLog(held.fetch, { capacity: 100 });
    for (let i = 0; i < 3; i++) log.record(record(i));
    const away = log.flush();
    await expect.poll(() => held.away()).toBe(true);
    for (let i = 3; i < 6; i++) log.record(record(i));
    held.release();
    await away;
    // Steady traffic is shipped in batches: one post for what was there, the rest waits its turn.
    expect(s.batches.map((b) => b.records.length)).toEqual([3]);
    expect(log.stats()).toMatchObject({ buffered: 3, shipped: 3 });
    await log.flush();
    expect(shippedIds(s.batches)).toEqual(['call-0', 'call-1', 'call-2', 'call-3', 'call-4', 'call-5']);
  });

  it('ships again soon when the ring is half full once more by the time a batch comes back', async () => {
    const { s, fetchFn } = fakeIngest();
    const held = holdFirstPost(fetchFn);
    const log = makeLog(held.fetch, { capacity: 8, flushIntervalMs: 3_600_000 });
    for (let i = 0; i < 4; i++) log.record(record(i));
    await expect.poll(() => held.away(), { timeout: 5_000 }).toBe(true);
    for (let i = 4; i < 8; i++) log.record(record(i));
    held.release();
    await expect.poll(() => shippedIds(s.batches).length, { timeout: 5_000 }).toBe(8);
    expect(s.batches.map((b) => b.records.length)).toEqual([4, 4]);
    expect(log.stats()).toMatchObject({ dropped: 0 });
  });

  it('backs off after a failure instead of retrying at once', async () => {
    const { s, fetchFn } = fakeIngest();
    s.down = true;
    const log = makeLog(fetchFn, { capacity: 100, flushIntervalMs: 10, backoff: { initialMs: 60_000 } });
    log.record(record(0));
    await expect.poll(() => s.attempts, { timeout: 5_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(s.attempts).toBe(1);
    expect(log.stats().buffered).toBe(1);
  });

  it('gives up on a batch the server refuses as invalid and counts it as rejected', async () => {
    const { s, fetchFn } = fakeIngest();
    s.status = 400;
    const log = makeLog(fetchFn);
    log.record(record(0));
    await log.flush();
    expect(log.stats()).toMatchObject({ buffered: 0, shipped: 0, rejected: 1 });
    expect(log.stats().lastError).toMatch(/400: bad record/);
  });

  it('refuses locally a record that could never pass the schema, so it cannot sink its batch', async () => {
    const { s, fetchFn } = fakeIngest();
    const log = makeLog(fetchFn);
    log.record({ ...record(0), groups: ['no spaces allowed'] });
    log.record({ ...record(1), tool: 'x'.repeat(500) });
    await log.flush();
    expect(s.batches[0].records).toHaveLength(1);
    expect(s.batches[0].records[0].tool).toHaveLength(200);
    expect(validate('decision-batch', s.batches[0]).ok).toBe(true);
    expect(log.stats()).toMatchObject({ shipped: 1, rejected: 1 });
  });

  it('turns what decide() answered into records with the request, the reason and the bundle, never the arguments', async () => {
    const { s, fetchFn } = fakeIngest();
    const log = makeLog(fetchFn);
    const loaded = loadBundle(makeBundle({ tenant: 'acme', version: 7 }));
    const view = createView(loaded, { subject: 'agent:support-bot', state: 'undefined', facts: { hostSession: 'ready' }, profile: 'openai' });
    const calls = [
      { toolCallId: 'a', name: 'core__tool-0001', arguments: '{"query":"secret text"}' },
      { toolCallId: 'b', name: 'core__tool-0000', arguments: '{"query":"x"}' },
      { toolCallId: 'c', name: 'core__tool-0002', arguments: '{"query":"y"}' },
      { toolCallId: 'd', name: 'core__nope', arguments: '{}' },
      { toolCallId: 'e', name: 'core__tool-0001', arguments: '{"query":' },
    ];
    for (const call of calls) log.recordDecision(view, call.name, decide(view, call));
    await log.flush();
    const records = s.batches[0].records;
    expect(JSON.stringify(records)).not.toContain('secret text');
    expect(records.map((r) => [r.toolCallId, r.decision, r.errorCode ?? null, r.reason ?? null])).toEqual([
      ['a', 'allow', null, null],
      ['b', 'deny', 'policy_denied', 'denied'],
      ['c', 'require_approval', null, null],
      ['d', 'deny', 'unavailable', null],
      ['e', 'deny', 'invalid_json', null],
    ]);
    expect(records[0]).toMatchObject({
      subject: 'agent:support-bot',
      groups: ['default'],
      state: 'undefined',
      profile: 'openai',
      facts: { hostSession: 'ready' },
      bundleVersion: 7,
      revision: loaded.bundle.revision,
    });
    expect(validate('decision-batch', s.batches[0]).ok).toBe(true);
  });

  it('logs the request as it was when decided, even if the caller moves it on afterwards', async () => {
    const { s, fetchFn } = fakeIngest();
    const log = makeLog(fetchFn);
    const loaded = loadBundle(makeBundle({ tenant: 'acme', version: 1 }));
    const request = { subject: 'agent:support-bot', state: 'undefined', facts: { step: 1 } as Record<string, number> };
    const view = createView(loaded, request);
    log.recordDecision(view, 'core__tool-0001', decide(view, { name: 'core__tool-0001', arguments: '{"query":"q"}' }));
    request.state = 'later';
    request.facts = { step: 2 };
    await log.flush();
    expect(s.batches[0].records[0]).toMatchObject({ state: 'undefined', facts: { step: 1 } });
  });

  it('leaves facts out with logFacts: false', async () => {
    const { s, fetchFn } = fakeIngest();
    const log = makeLog(fetchFn, { logFacts: false });
    const loaded = loadBundle(makeBundle({ tenant: 'acme', version: 1 }));
    const view = createView(loaded, { subject: 'agent:support-bot', facts: { hostSession: 'ready' } });
    log.recordDecision(view, 'core__tool-0001', decide(view, { name: 'core__tool-0001', arguments: '{"query":"q"}' }));
    await log.flush();
    expect(s.batches[0].records[0].facts).toBeUndefined();
  });
});
