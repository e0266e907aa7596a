import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionRecord, EvaluationRequest } from '../../policy-schemas/types.gen.ts';
import { createDecisionLog } from '../../runtime/client/decision-log.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { makeBundle } from '../distribution/signed-bundles.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { decisionRecord } from '../support/decision-records.ts';

// The server refuses a whole decision batch for one bad record. A record that evaluate() and the
// SDK accept but the log's schema does not (a subject with an apostrophe, a fact named
// `constructor`) therefore used to take every other record of its batch with it: whoever chooses
// a subject or a fact could erase other callers' decisions from the log.

const tenant = 'acme-research';
let t: TestApp;
let runtimeToken: string;
beforeAll(async () => {
  t = await startTestApp();
  runtimeToken = await t.tokenFor('runtime', [tenant]);
});
afterAll(async () => t.close());

let seq = 0;
function rec(over: Partial<DecisionRecord> = {}): DecisionRecord {
  seq++;
  return decisionRecord({ at: new Date(Date.now() - 1000).toISOString(), toolCallId: `good-${seq}`, ...over });
}

/** A decision log shipping into the real API, as a runtime of the tenant would. */
function logInto(runtimeId: string) {
  const fetchApp = (async (url: string, init: RequestInit) => t.app.request(new URL(url).pathname, init)) as unknown as typeof fetch;
  return createDecisionLog({ url: 'http://toolgate.test', tenant, token: runtimeToken, runtimeId, fetch: fetchApp, flushIntervalMs: 3_600_000 });
}

async function storedCallIds(runtimeId: string): Promise<string[]> {
  const r = await t.request('GET', `/v1/tenants/${tenant}/decisions?runtimeId=${runtimeId}&limit=1000`);
  expect(r.status).toBe(200);
  return (r.json.items as { toolCallId: string }[]).map((i) => i.toolCallId).sort();
}

const hostile: [string, () => DecisionRecord][] = [
  ['a subject with an apostrophe', () => rec({ subject: "user:o'brien@example.com" })],
  ['a subject with a space', () => rec({ subject: 'agent research bot' })],
  ['a subject with a control character', () => rec({ subject: 'agent:\u001b[2Jbot' })],
  ['a fact named constructor', () => rec({ facts: JSON.parse('{"constructor":"x"}') })],
  ['a fact named __proto__', () => rec({ facts: JSON.parse('{"__proto__":"x"}') })],
  ['a fact named prototype', () => rec({ facts: { prototype: 1 } })],
  ['a time that is not an instant', () => rec({ at: 'yesterday' })],
  ['a bundle version of 0', () => rec({ bundleVersion: 0 })],
  ['a revision that is not a sha256', () => rec({ revision: 'sha256:xyz' })],
  ['a decision outside the three', () => rec({ decision: 'maybe' as never })],
];

describe('one hostile record cannot erase the other records of its batch', () => {
  hostile.forEach(([name, make], i) => {
    it(`${name}: its neighbours are stored, it alone is counted rejected`, async () => {
      const runtimeId = `poison-${i}`;
      const log = logInto(runtimeId);
      const before = rec();
      const after = rec();
      log.record(before);
      log.record(make());
      log.record(after);
      await log.flush();
      expect(log.stats()).toMatchObject({ shipped: 2, rejected: 1, buffered: 0 });
      expect(await storedCallIds(runtimeId)).toEqual([before.toolCallId, after.toolCallId].sort());
      await log.close();
    });
  });

  it('decide() for a subject evaluate() accepts but the log refuses does not lose the batch', async () => {
    const loaded = loadBundle(makeBundle({ tenant, version: 1 }));
    const log = logInto('poison-decide');
    const requests: EvaluationRequest[] = [
      { subject: 'agent:support-bot' },
      { subject: "user:o'brien@example.com" },
      { subject: 'agent:support-bot', facts: JSON.parse('{"constructor":"ready"}') },
      { subject: 'agent:support-bot' },
    ];
    for (const [i, request] of requests.entries()) {
      const view = createView(loaded, request);
      log.recordDecision(view, 'core__anything', decide(view, { toolCallId: `decide-${i}`, name: 'core__anything' }));
    }
    await log.flush();
    expect(log.stats()).toMatchObject({ shipped: 2, rejected: 2 });
    expect(await storedCallIds('poison-decide')).toEqual(['decide-0', 'decide-3']);
    await log.close();
  });

  it('names cut to the schema length stay whole characters (no lone surrogate for the server to refuse)', async () => {
    const log = logInto('poison-cut');
    const emoji = '\u{1F600}';
    const longSubject = `agent:${emoji.repeat(250)}`;
    log.record(rec({ subject: longSubject, tool: emoji.repeat(250), toolCallId: `cut-${emoji.repeat(250)}` }));
    log.record(rec());
    await log.flush();
    expect(log.stats()).toMatchObject({ shipped: 2, rejected: 0 });
    const r = await t.request('GET', `/v1/tenants/${tenant}/decisions?runtimeId=poison-cut&limit=10`);
    const cut = (r.json.items as DecisionRecord[]).find((d) => d.subject.includes(emoji))!;
    expect([...cut.subject]).toHaveLength(200);
    expect(cut.subject).toBe(`agent:${emoji.repeat(194)}`);
    expect([...cut.tool]).toHaveLength(200);
    await log.close();
  });
});
