import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { YIELD_EVERY, analyzeImpact } from '../../server/decisions/impact.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// Impact analysis replays up to 50,000 distinct logged requests, and a tenant's viewer may ask for
// it. It ran as one synchronous stretch: with 50,000 requests logged, each call stalled the whole
// server (every tenant, bundle pulls included) for seconds, and a viewer could repeat it at will.
// It now gives the event loop a turn between slices of the replay.

const tenant = 'acme-research';
const DISTINCT = 3000;
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const runtime = await t.tokenFor('runtime', [tenant]);
  const now = Date.now();
  for (let b = 0; b < DISTINCT / 1000; b++) {
    // Each record a distinct request (its own subject and facts), as a busy fleet logs them.
    const records = Array.from({ length: 1000 }, (_, i) => ({
      at: new Date(now - 60_000 + i).toISOString(),
      toolCallId: `flood-${b}-${i}`,
      subject: `agent:flood-${b}-${i}`,
      groups: ['knowledge'],
      state: 'undefined',
      tool: 'core__knowledge-query',
      decision: 'allow',
      bundleVersion: 1,
      facts: { n: i },
    }));
    const r = await t.request('POST', `/v1/tenants/${tenant}/decisions`, { token: runtime, body: { runtimeId: 'flood', records } });
    expect(r.status).toBe(202);
  }
}, 120_000);
afterAll(async () => t.close());

describe('impact analysis over many logged requests', () => {
  it('lets other work run between slices of the replay instead of holding the event loop throughout', async () => {
    const db = t.deps.database.db;
    const loaded = await (await t.deps.compiler.compileDraft(db, tenant)).loaded();
    let turns = 0;
    let running = true;
    const otherWork = () => {
      if (!running) return;
      turns++;
      setImmediate(otherWork);
    };
    setImmediate(otherWork);
    const report = await analyzeImpact(db, tenant, loaded, {
      from: new Date(Date.now() - 3_600_000).toISOString(),
      to: new Date(Date.now() + 60_000).toISOString(),
      examples: 1,
    });
    running = false;
    expect(report.requests).toBe(DISTINCT);
    // Every slice of YIELD_EVERY rows ends with a turn for whatever else is waiting.
    expect(turns).toBeGreaterThanOrEqual(Math.floor(DISTINCT / YIELD_EVERY) - 1);
  });

  it('still answers the same report through the API', async () => {
    const viewer = await t.tokenFor('viewer', [tenant]);
    const r = await t.request('POST', `/v1/tenants/${tenant}/impact`, { token: viewer, body: { from: new Date(Date.now() - 3_600_000).toISOString() } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ requests: DISTINCT, calls: DISTINCT, truncated: false });
  });
});
