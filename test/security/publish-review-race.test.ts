import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { editPolicy } from '../support/edit-policy.ts';
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
  await editPolicy(
    t,
    T,
    (p) => {
      p.review = { publish: 'required', approvals: 1 };
    },
    { reason: 'publishes need a second person' },
  );
  // An admin's emergency publish: the latest version now equals the draft.
  const p = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'baseline', emergency: true } });
  expect(p.status, p.text).toBe(201);
});
afterAll(() => t?.close());

const denyTextCompletion = () =>
  editPolicy(
    t,
    T,
    (p) => {
      p.roles.researcher.allow = ['*'];
    },
    { token: editor, reason: 'researchers may call everything' },
  );

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
