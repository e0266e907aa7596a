import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionRecord, TenantPolicy } from '../../policy-schemas/types.gen.ts';
import { appendAuditEvent } from '../../server/audit/events.ts';
import { decisionSlices, summarizeDecisions } from '../../server/decisions/decision-store.ts';
import { analyzeImpact } from '../../server/decisions/impact.ts';
import { decisionRecord } from '../support/decision-records.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// A heavy request (an export, a chain walk, a summary, an impact run) must never hold the event
// loop for its whole duration: with a million rows that is seconds in which no bundle pull and no
// /healthz is answered. These tests put a few thousand rows in and show, by the order in which
// things happen, that other work (a macrotask queued meanwhile, as an incoming request's I/O is)
// runs between the request's chunks. How long anything takes is the availability benchmark's job.

const tenant = 'acme-research';
const AUDIT_EVENTS = 2_500;
const DECISIONS = 3_000;
let t: TestApp;
let auditor: string;
let viewer: string;

beforeAll(async () => {
  t = await startTestApp();
  auditor = await t.tokenFor('auditor');
  viewer = await t.tokenFor('viewer', [tenant]);
  await t.deps.database.change(async (tx) => {
    for (let i = 0; i < AUDIT_EVENTS; i++) {
      await appendAuditEvent(tx, { actor: 'system', action: 'update', entityType: 'tool', entityId: `core__tool-${i}`, after: { n: i } });
    }
  });
  const runtime = await t.tokenFor('runtime', [tenant]);
  const now = Date.now();
  for (let b = 0; b < DECISIONS / 1000; b++) {
    const records: DecisionRecord[] = Array.from({ length: 1000 }, (_, i) =>
      decisionRecord({
        at: new Date(now - 3_000_000 + (b * 1000 + i) * 500).toISOString(),
        toolCallId: `yield-${b}-${i}`,
        subject: `agent:yield-${i % 7}`,
        ...(i % 3 === 0 ? { decision: 'deny', errorCode: 'policy_denied', reason: i % 2 ? 'not_allowed' : 'group_not_granted' } : {}),
      }),
    );
    const r = await t.request('POST', `/v1/tenants/${tenant}/decisions`, { token: runtime, body: { runtimeId: 'yield-test', records } });
    expect(r.status).toBe(202);
  }
}, 120_000);
afterAll(async () => t.close());

/**
 * Runs `work` while other work re-queues itself with setImmediate (as a waiting request's I/O
 * callback would run), logging `turn` each time it gets to run; `work` logs its own steps.
 */
async function interleaved<T>(work: (log: string[]) => Promise<T>): Promise<{ result: T; log: string[] }> {
  const log: string[] = [];
  let running = true;
  const other = () => {
    if (!running) return;
    log.push('turn');
    setImmediate(other);
  };
  setImmediate(other);
  try {
    return { result: await work(log), log };
  } finally {
    running = false;
  }
}

/** How many of the work's steps (after the first) had other work run since the step before. */
function stepsAfterATurn(log: string[], step: string): { steps: number; afterTurn: number } {
  let steps = 0;
  let afterTurn = 0;
  let turnSince = false;
  for (const entry of log) {
    if (entry === 'turn') turnSince = true;
    else if (entry === step) {
      if (steps > 0 && turnSince) afterTurn++;
      steps++;
      turnSince = false;
    }
  }
  return { steps, afterTurn };
}

/** Reads a streamed answer chunk by chunk, logging `chunk` for each; answers the whole text. */
async function readChunks(res: Response, log: string[]): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    log.push('chunk');
    text += decoder.decode(value, { stream: true });
  }
}

describe('a heavy request gives other work a turn between its chunks', () => {
  for (const format of ['jsonl', 'csv'] as const) {
    it(`audit export (${format}): every chunk after the first follows a turn of other work, and the export is whole`, async () => {
      const { result: text, log } = await interleaved(async (log) => {
        const res = await t.app.request(`/v1/audit/export?format=${format}`, { headers: { authorization: `Bearer ${auditor}` } });
        expect(res.status).toBe(200);
        return readChunks(res, log);
      });
      const lines = text.split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(AUDIT_EVENTS);
      const { steps, afterTurn } = stepsAfterATurn(log, 'chunk');
      // 250 events a page: at least five pages, each one after other work ran (the CSV header goes
      // out as a chunk of its own, just before the first page).
      expect(steps).toBeGreaterThanOrEqual(5);
      // (On PostgreSQL every query waits on the network, so the header too may follow a turn.)
      expect(afterTurn).toBeGreaterThanOrEqual(steps - (format === 'csv' ? 2 : 1));
    });
  }

  it('decisions export: every chunk after the first follows a turn of other work, and every record is there', async () => {
    const { result: text, log } = await interleaved(async (log) => {
      const res = await t.app.request(`/v1/tenants/${tenant}/decisions/export?format=jsonl&runtimeId=yield-test`, {
        headers: { authorization: `Bearer ${auditor}` },
      });
      expect(res.status).toBe(200);
      return readChunks(res, log);
    });
    expect(text.split('\n').filter(Boolean)).toHaveLength(DECISIONS);
    const { steps, afterTurn } = stepsAfterATurn(log, 'chunk');
    expect(steps).toBeGreaterThanOrEqual(DECISIONS / 500);
    expect(afterTurn).toBe(steps - 1);
  });

  it('audit verify: other work runs during the walk of the chain, and the chain verifies', async () => {
    const { result, log } = await interleaved(async (log) => {
      const r = await t.request('GET', '/v1/audit/verify', { token: auditor });
      log.push('answered');
      return r;
    });
    expect(result.status).toBe(200);
    expect(result.json).toMatchObject({ ok: true });
    expect(result.json.count).toBeGreaterThan(AUDIT_EVENTS);
    // One turn at least per page of 500 events walked.
    expect(log.filter((e) => e === 'turn').length).toBeGreaterThanOrEqual(Math.floor(AUDIT_EVENTS / 500));
  });

  it('decision slices: consecutive, each record in exactly one, a turn of other work between two slices', async () => {
    const window = { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
    const { result: slices, log } = await interleaved(async (log) => {
      const all = [];
      for await (const s of decisionSlices(t.deps.database.db, tenant, window, 400)) {
        log.push('slice');
        all.push(s);
      }
      return all;
    });
    expect(slices.length).toBe(Math.ceil(DECISIONS / 400) + (DECISIONS % 400 === 0 ? 1 : 0));
    expect(slices[0].after).toBeNull();
    expect(slices[slices.length - 1].upTo).toBeNull();
    for (let i = 1; i < slices.length; i++) expect(slices[i].after).toEqual(slices[i - 1].upTo);
    const { steps, afterTurn } = stepsAfterATurn(log, 'slice');
    expect(afterTurn).toBe(steps - 1);
  });

  it('decision summary: cut into slices of 97 records it answers exactly what one slice answers', async () => {
    const now = new Date();
    const db = t.deps.database.db;
    const whole = await summarizeDecisions(db, tenant, {}, now);
    const { result: sliced, log } = await interleaved(() => summarizeDecisions(db, tenant, {}, now, 97));
    expect(sliced).toEqual(whole);
    expect(whole.topDeniedSubjects.length).toBeGreaterThan(1);
    expect(whole.buckets.reduce((n, b) => n + b.allow + b.deny, 0)).toBeGreaterThanOrEqual(DECISIONS);
    expect(log.filter((e) => e === 'turn').length).toBeGreaterThanOrEqual(Math.floor(DECISIONS / 97) - 1);
  });

  it('impact analysis: cut into slices of 97 records it answers exactly what one slice answers', async () => {
    const db = t.deps.database.db;
    // The saved policy with nothing allowed: whatever was allowed would now be denied.
    const saved = (await t.request('GET', `/v1/tenants/${tenant}/policy`)).json as TenantPolicy & Record<string, unknown>;
    const { version: _v, createdAt: _c, updatedAt: _u, tenant: _t, ...policy } = saved;
    for (const role of Object.values(policy.roles ?? {})) role.allow = [];
    const loaded = await (await t.deps.compiler.compileDraft(db, tenant, policy as TenantPolicy)).loaded();
    const w = { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString(), examples: 2 };
    const whole = await analyzeImpact(db, tenant, loaded, w);
    const { result: sliced, log } = await interleaved(() => analyzeImpact(db, tenant, loaded, { ...w, sliceRows: 97 }));
    expect(sliced).toEqual(whole);
    // An empty policy denies what was allowed: the analysis has something to count.
    expect(whole.totals.allowToDeny).toBeGreaterThan(0);
    expect(log.filter((e) => e === 'turn').length).toBeGreaterThanOrEqual(Math.floor(DECISIONS / 97) - 1);
  });

  it('decision ingest: a batch of 2,000 records is written with turns of other work between chunks, and stored whole', async () => {
    const runtime = await t.tokenFor('runtime', [tenant]);
    const records = Array.from({ length: 2_000 }, (_, i) =>
      decisionRecord({ at: new Date(Date.now() - 120_000 + i).toISOString(), toolCallId: `ingest-yield-${i}` }),
    );
    const { result, log } = await interleaved(async (log) => {
      const r = await t.request('POST', `/v1/tenants/${tenant}/decisions`, { token: runtime, body: { runtimeId: 'yield-ingest', records } });
      log.push('answered');
      return r;
    });
    expect(result.status).toBe(202);
    expect(result.json.accepted).toBe(2_000);
    // 500 rows a chunk: at least three turns of other work before the answer.
    expect(log.indexOf('answered')).toBeGreaterThanOrEqual(3);
    const stored = await t.request('GET', `/v1/tenants/${tenant}/decisions?runtimeId=yield-ingest&limit=1000`, { token: viewer });
    expect(stored.json.items).toHaveLength(1000);
    expect(stored.json.nextCursor).not.toBeNull();
  });

  it('an impact window whose start is after its end is still refused with the pointer', async () => {
    const r = await t.request('POST', `/v1/tenants/${tenant}/impact`, {
      token: viewer,
      body: { from: new Date().toISOString(), to: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/from');
  });
});
