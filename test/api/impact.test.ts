import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionRecord, EvaluationRequest, TenantPolicy } from '../../policy-schemas/types.gen.ts';
import { MAX_CONCURRENT_IMPACT_RUNS } from '../../server/decisions/impact-slots.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
let runtime: string;
const base = '/v1/tenants/acme-research';
const research: EvaluationRequest = { subject: 'agent:research-bot', groups: ['knowledge', 'text'], state: 'undefined' };
const analysis: EvaluationRequest = { subject: 'agent:analysis-bot', groups: ['knowledge', 'text'], state: 'undefined' };
let saved: TenantPolicy;
let seq = 0;

beforeAll(async () => {
  t = await startTestApp();
  runtime = await t.tokenFor('runtime', ['acme-research']);
  saved = (await t.request('GET', `${base}/policy`)).json;
});
afterAll(async () => t.close());

/** `n` logged calls of `tool` under `request`, decided as the saved draft decides them. */
async function logCalls(request: EvaluationRequest, tool: string, n: number, over: Partial<DecisionRecord> = {}, ageMs = 60_000): Promise<void> {
  const sim = (await t.request('POST', `${base}/simulate`, { body: request })).json;
  const visible = sim.tools.find((x: { id: string }) => x.id === tool);
  const hidden = sim.filtered.find((x: { id: string }) => x.id === tool);
  const decided: Partial<DecisionRecord> = visible ? { decision: visible.decision } : { decision: 'deny', errorCode: 'policy_denied', reason: hidden?.reason };
  const records: DecisionRecord[] = Array.from(
    { length: n },
    () =>
      ({
        at: new Date(Date.now() - ageMs + seq).toISOString(),
        toolCallId: `c-${++seq}`,
        subject: request.subject,
        groups: request.groups!,
        state: request.state!,
        tool,
        bundleVersion: 1,
        ...decided,
        ...over,
      }) as DecisionRecord,
  );
  const r = await t.request('POST', `${base}/decisions`, { token: runtime, body: { runtimeId: 'impact-test', records } });
  expect(r.status).toBe(202);
}

describe('POST /v1/tenants/:tenant/impact', () => {
  it('counts exactly the logged calls a draft would decide differently, per tool and per subject, with examples', async () => {
    await logCalls(research, 'core__knowledge-query', 7);
    await logCalls(research, 'core__text-completion', 4);
    await logCalls(analysis, 'core__knowledge-query', 5);
    await logCalls(analysis, 'core__complex-analysis', 3);
    // Not replayable: refused for its arguments; and one outside the default 7-day window.
    await logCalls(research, 'core__knowledge-query', 2, { decision: 'deny', errorCode: 'validation' });
    await logCalls(research, 'core__knowledge-query', 9, {}, 8 * 86400_000);

    const unchanged = await t.request('POST', `${base}/impact`, {});
    expect(unchanged.status).toBe(200);
    expect(unchanged.json.totals).toEqual({ allowToDeny: 0, denyToAllow: 0, toApproval: 0, fromApproval: 0 });
    expect(unchanged.json.calls).toBe(7 + 4 + 5 + 3 + 2);
    expect(unchanged.json.replayed).toBe(7 + 4 + 5 + 3);
    expect(unchanged.json.requests).toBe(2);

    const draft = structuredClone(saved);
    draft.roles!.researcher.deny = ['core__knowledge-query'];
    const r = await t.request('POST', `${base}/impact`, { body: { policy: draft } });
    expect(r.status).toBe(200);
    expect(r.json.totals).toEqual({ allowToDeny: 7, denyToAllow: 0, toApproval: 0, fromApproval: 0 });
    expect(r.json.changes).toEqual([
      { subject: 'agent:research-bot', tool: 'core__knowledge-query', from: 'allow', to: 'deny', reason: 'denied', calls: 7, examples: [research] },
    ]);
    expect(r.json.byTool).toEqual([{ key: 'core__knowledge-query', allowToDeny: 7, denyToAllow: 0, toApproval: 0, fromApproval: 0 }]);
    expect(r.json.bySubject).toEqual([{ key: 'agent:research-bot', allowToDeny: 7, denyToAllow: 0, toApproval: 0, fromApproval: 0 }]);
  });

  it('reports calls that would be allowed again and calls that would move to or from approval', async () => {
    // An older bundle decided these differently from today's draft; the window keeps the first test's calls out.
    const window = { from: new Date(Date.now() - 3 * 3600_000).toISOString(), to: new Date(Date.now() - 3600_000).toISOString() };
    const twoHours = 2 * 3600_000;
    await logCalls(analysis, 'core__knowledge-query', 6, {}, twoHours);
    await logCalls(research, 'core__text-completion', 3, { decision: 'deny', errorCode: 'policy_denied', reason: 'denied' }, twoHours);
    await logCalls(analysis, 'core__text-completion', 4, { decision: 'require_approval' }, twoHours);

    const asSaved = await t.request('POST', `${base}/impact`, { body: window });
    expect(asSaved.json.totals).toEqual({ allowToDeny: 0, denyToAllow: 3, toApproval: 0, fromApproval: 4 });

    const draft = structuredClone(saved);
    draft.roles!.analyst.requireApproval = ['read_only', 'state_change', 'external_side_effect'];
    const r = await t.request('POST', `${base}/impact`, { body: { ...window, policy: draft } });
    expect(r.json.totals).toEqual({ allowToDeny: 0, denyToAllow: 3, toApproval: 6, fromApproval: 0 });
    expect(r.json.changes).toEqual([
      expect.objectContaining({ subject: 'agent:analysis-bot', tool: 'core__knowledge-query', from: 'allow', to: 'require_approval', calls: 6 }),
      expect.objectContaining({ subject: 'agent:research-bot', tool: 'core__text-completion', from: 'deny', to: 'allow', calls: 3 }),
    ]);
    expect(r.json.bySubject.map((k: { key: string }) => k.key)).toEqual(['agent:analysis-bot', 'agent:research-bot']);
  });

  it('refuses a bad window or policy with pointers, and is open to every reader of the tenant but runtimes', async () => {
    const bad = await t.request('POST', `${base}/impact`, { body: { from: 'yesterday', policy: { roles: { x: { allow: ['bad glob'] } } } } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/from', '/policy/roles/x/allow/0']);
    const reversed = await t.request('POST', `${base}/impact`, { body: { from: new Date().toISOString(), to: new Date(Date.now() - 1000).toISOString() } });
    expect(reversed.status).toBe(400);
    for (const role of ['viewer', 'editor'] as const) {
      expect((await t.request('POST', `${base}/impact`, { token: await t.tokenFor(role, ['acme-research']), body: {} })).status).toBe(200);
    }
    expect((await t.request('POST', `${base}/impact`, { token: runtime, body: {} })).status).toBe(403);
    expect((await t.request('POST', '/v1/tenants/globex-eng/impact', { token: await t.tokenFor('viewer', ['acme-research']), body: {} })).status).toBe(404);
  });
});

describe('POST /v1/tenants/:tenant/impact while other analyses run', () => {
  it(`refuses a third analysis at once with 429 and Retry-After, and runs again once a slot is free`, async () => {
    const held = Array.from({ length: MAX_CONCURRENT_IMPACT_RUNS }, () => t.deps.impactSlots.take());
    expect(held.every((r) => r !== null)).toBe(true);
    try {
      const refused = await t.request('POST', `${base}/impact`, {});
      expect(refused.status).toBe(429);
      expect(refused.json).toMatchObject({ code: 'rate_limited', retryAfter: 5 });
      expect(refused.json.detail).toContain('impact analyses are already running');
      expect(refused.headers.get('retry-after')).toBe('5');
    } finally {
      for (const release of held) release?.();
    }
    expect((await t.request('POST', `${base}/impact`, {})).status).toBe(200);
    // An analysis that fails once it has its slot (a policy that does not compile) gives the slot back.
    const broken = { ...saved, roles: { ...saved.roles, analyst: { ...Object.values(saved.roles ?? {})[0], groups: ['no-such-group'] } } };
    const failed = await t.request('POST', `${base}/impact`, { body: { policy: broken } });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    expect(failed.status).toBeLessThan(500);
    expect(failed.status).not.toBe(429);
    const again = Array.from({ length: MAX_CONCURRENT_IMPACT_RUNS }, () => t.deps.impactSlots.take());
    expect(again.every((r) => r !== null)).toBe(true);
    for (const release of again) release?.();
  });
});
