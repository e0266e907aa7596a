import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

// The attack: under a review rule, an editor asks to publish a draft that equals the latest
// version (nothing to review, so the publish goes straight through) and edits the draft in the
// moment between that check and the compile that publishes. The hook below makes that moment
// deterministic: the first look at the latest version after `arm` runs the edit first.
let hook: (() => Promise<void>) | null = null;
vi.mock('../../server/store/bundles.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../server/store/bundles.ts')>();
  return {
    ...real,
    latestBundleHead: async (...args: Parameters<typeof real.latestBundleHead>) => {
      const run = hook;
      hook = null;
      if (run) await run();
      return real.latestBundleHead(...args);
    },
  };
});

const T = 'acme-research';
let t: TestApp;
let editor: string;

beforeAll(async () => {
  t = await startTestApp();
  editor = await t.tokenFor('editor', [T]);
  const cur = await t.request('GET', `/v1/tenants/${T}/policy`);
  const r = await t.request('PUT', `/v1/tenants/${T}/policy`, {
    body: { ...cur.json, review: { publish: 'required', approvals: 1 } },
    headers: { 'if-match': cur.headers.get('etag')!, 'toolgate-reason': 'publishes need a second person' },
  });
  expect(r.status, r.text).toBe(200);
  // An admin's emergency publish: the latest version now equals the draft.
  const p = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'baseline', emergency: true } });
  expect(p.status, p.text).toBe(201);
});
afterAll(() => t?.close());

async function denyTextCompletion(): Promise<void> {
  const cur = await t.request('GET', `/v1/tenants/${T}/policy`, { token: editor });
  const policy = structuredClone(cur.json);
  policy.roles.researcher.allow = ['*'];
  const r = await t.request('PUT', `/v1/tenants/${T}/policy`, {
    body: policy,
    headers: { 'if-match': cur.headers.get('etag')!, 'toolgate-reason': 'researchers may call everything' },
    token: editor,
  });
  expect(r.status, r.text).toBe(200);
}

describe('publish review race', () => {
  it('never publishes a draft edited after the check that found nothing to review', async () => {
    const before = (await t.request('GET', `/v1/tenants/${T}/bundles`)).json.items.length as number;
    hook = denyTextCompletion;
    const r = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'nothing changed' }, token: editor });
    expect(hook).toBeNull();
    // The edit is not published without review: refused as changed meanwhile (409), or put to review (202).
    expect([409, 202], r.text).toContain(r.status);
    const after = (await t.request('GET', `/v1/tenants/${T}/bundles`)).json.items.length as number;
    expect(after).toBe(before);
    const latest = await t.request('GET', `/v1/tenants/${T}/bundles/latest`);
    expect(JSON.stringify(latest.json.policy.roles.researcher.allow)).not.toBe('["*"]');
    // Asked again, the edited draft goes to a second person.
    const again = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'researchers may call everything' }, token: editor });
    expect(again.status, again.text).toBe(202);
  });
});
