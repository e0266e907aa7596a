import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { editPolicy as editPolicyOf } from '../support/edit-policy.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// Asking for a review runs the policy tests on the draft, then names the content to review: that
// is the draft the tests read and compiled, not a second read of it (a few thousand tools each).
let draftReads = 0;
vi.mock('../../server/store/snapshot.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../server/store/snapshot.ts')>();
  return {
    ...real,
    loadDraftSnapshot: async (...args: Parameters<typeof real.loadDraftSnapshot>) => {
      draftReads++;
      return real.loadDraftSnapshot(...args);
    },
  };
});

const T = 'acme-research';
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  expect((await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'baseline' } })).status).toBe(201);
  const cur = await t.request('GET', `/v1/tenants/${T}/tests`);
  const put = await t.request('PUT', `/v1/tenants/${T}/tests`, {
    body: { tests: [{ name: 'research bot sees search', request: { subject: 'agent:research-bot', groups: ['knowledge'] }, expect: { rejected: false } }] },
    headers: { 'if-match': cur.headers.get('etag')!, 'toolgate-reason': 'guard' },
  });
  expect(put.status, put.text).toBe(200);
});
afterAll(() => t?.close());

describe('a publish request of a tenant with policy tests', () => {
  it('reads the draft once and names the revision the tests ran on', async () => {
    await editPolicyOf(t, T, (p) => {
      p.roles.researcher.deny = ['core__text-completion'];
    });
    const draft = (await t.request('GET', `/v1/tenants/${T}/bundles/latest/diff/draft`)).json.to.revision as string;
    draftReads = 0;
    const asked = await t.request('POST', `/v1/tenants/${T}/publish-requests`, { body: { reason: 'researchers stop completing text' } });
    expect(asked.status, asked.text).toBe(202);
    expect(asked.json.revision).toBe(draft);
    expect(asked.json.tests).toEqual([expect.objectContaining({ name: 'research bot sees search', passed: true })]);
    expect(draftReads).toBe(1);
  });

  it('a rollback request reads no draft at all', async () => {
    draftReads = 0;
    const asked = await t.request('POST', `/v1/tenants/${T}/publish-requests`, { body: { reason: 'back', rollbackTo: 1 } });
    // Version 1 is the latest: nothing to review, and the draft was never the question.
    expect(asked.status, asked.text).toBe(409);
    expect(draftReads).toBe(0);
  });
});
