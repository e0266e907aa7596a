import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { editPolicy as editPolicyOf } from '../support/edit-policy.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// The attack: a policy test added after a publish request refuses its content when a reviewer
// approves it (the tests run again). The requester edits the draft to something that passes just
// before the approval runs the tests, and puts the reviewed content back before it is compiled
// to publish: the tests must have run on exactly the content that ships. The hook below makes
// that moment deterministic: the first look at the latest version after `arm` runs the edit first.
let hook: (() => Promise<void>) | null = null;
vi.mock('../../server/store/bundles.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../server/store/bundles.ts')>();
  return {
    ...real,
    latestBundleRow: async (...args: Parameters<typeof real.latestBundleRow>) => {
      const run = hook;
      hook = null;
      if (run) await run();
      return real.latestBundleRow(...args);
    },
  };
});

const T = 'acme-research';
let t: TestApp;
let requester: string;
let reviewer: string;

beforeAll(async () => {
  t = await startTestApp();
  requester = await t.tokenFor('editor', [T]);
  reviewer = await t.tokenFor('editor', [T]);
  await editPolicy((p) => {
    p.review = { publish: 'required', approvals: 1 };
  });
  expect((await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'baseline', emergency: true } })).status).toBe(201);
});
afterAll(() => t?.close());

const editPolicy = (change: (p: Record<string, any>) => void, token?: string) => editPolicyOf(t, T, change, { token, reason: 'edit' });

const withoutQuery = (p: Record<string, any>) => {
  p.roles.researcher.allow = p.roles.researcher.allow.filter((g: string) => g !== 'core__knowledge-query');
};
const withQuery = (p: Record<string, any>) => {
  p.roles.researcher.allow = [...p.roles.researcher.allow, 'core__knowledge-query'];
};

describe('approving a publish request while the draft flips', () => {
  it('refuses when the tests ran on another draft than the reviewed content that would ship', async () => {
    await editPolicy(withoutQuery, requester);
    const asked = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'researchers stop querying' }, token: requester });
    expect(asked.status, asked.text).toBe(202);
    // Someone guards against exactly that change with a test.
    const cur = await t.request('GET', `/v1/tenants/${T}/tests`);
    const put = await t.request('PUT', `/v1/tenants/${T}/tests`, {
      body: {
        tests: [
          {
            name: 'research bot queries knowledge',
            request: { subject: 'agent:research-bot', groups: ['knowledge'] },
            expect: { visible: ['core__knowledge-query'] },
          },
        ],
      },
      headers: { 'if-match': cur.headers.get('etag')!, 'toolgate-reason': 'guard' },
    });
    expect(put.status, put.text).toBe(200);
    // The requester makes the draft pass the tests, and arms putting the reviewed content back.
    await editPolicy(withQuery, requester);
    hook = () => editPolicy(withoutQuery, requester);
    const before = (await t.request('GET', `/v1/tenants/${T}/bundles`)).json.items.length as number;
    const r = await t.request('POST', `/v1/tenants/${T}/publish-requests/${asked.json.id}/approve`, { body: { reason: 'ok' }, token: reviewer });
    expect([409, 422], r.text).toContain(r.status);
    // Refused before the flip back ran, or after it: the draft ends as reviewed either way.
    const revert = hook;
    hook = null;
    if (revert) await revert();
    expect((await t.request('GET', `/v1/tenants/${T}/bundles`)).json.items.length).toBe(before);
    // Approved again with the draft as reviewed, the test refuses it.
    const again = await t.request('POST', `/v1/tenants/${T}/publish-requests/${asked.json.id}/approve`, { body: { reason: 'ok' }, token: reviewer });
    expect(again.status, again.text).toBe(422);
    expect(again.json.code).toBe('tests_failed');
  });
});
