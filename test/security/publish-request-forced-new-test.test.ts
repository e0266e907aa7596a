import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editPolicy as editPolicyOf } from '../support/edit-policy.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// The attack: an admin asks to publish past a failing policy test (force, with a reason) under the
// review rule. A test added after the request guards against another part of the same change, and
// an editor, who may not force, approves: the admin's force must not carry over to a failure the
// admin never saw. Before, the approval forced every failure found at approval time.

const T = 'acme-research';
let t: TestApp;
let reviewer: string;

beforeAll(async () => {
  t = await startTestApp();
  reviewer = await t.tokenFor('editor', [T]);
  await editPolicy((p) => {
    p.review = { publish: 'required', approvals: 1 };
  });
  expect((await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'baseline', emergency: true } })).status).toBe(201);
});
afterAll(() => t?.close());

const editPolicy = (change: (p: Record<string, any>) => void) => editPolicyOf(t, T, change, { reason: 'edit' });
const versions = async () => (await t.request('GET', `/v1/tenants/${T}/bundles`)).json.items.length as number;
const test = (name: string) => ({
  name,
  request: { subject: 'agent:research-bot', groups: ['knowledge'] },
  expect: { visible: ['core__knowledge-query'] },
});
async function putTests(tests: unknown[]) {
  const cur = await t.request('GET', `/v1/tenants/${T}/tests`);
  const put = await t.request('PUT', `/v1/tenants/${T}/tests`, {
    body: { tests },
    headers: { 'if-match': cur.headers.get('etag')!, 'toolgate-reason': 'guard' },
  });
  expect(put.status, put.text).toBe(200);
}

describe("an admin's forced publish request", () => {
  it('is refused to an editor when a test added since fails too, and carries over only the failures the admin forced', async () => {
    await putTests([test('research bot queries knowledge')]);
    await editPolicy((p) => {
      p.roles.researcher.allow = p.roles.researcher.allow.filter((g: string) => g !== 'core__knowledge-query');
    });
    const asked = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'researchers stop querying', force: true } });
    expect(asked.status, asked.text).toBe(202);
    expect(asked.json.forced).toBe(true);

    // A second test guards the same change after the request.
    await putTests([test('research bot queries knowledge'), test('knowledge stays queryable')]);
    const before = await versions();
    const refused = await t.request('POST', `/v1/tenants/${T}/publish-requests/${asked.json.id}/approve`, { body: { reason: 'ok' }, token: reviewer });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.code).toBe('tests_failed');
    expect(refused.json.errors.map((e: { pointer: string }) => e.pointer)).toEqual([expect.stringMatching(/^\/tests\/1\//)]);
    expect(await versions()).toBe(before);
    expect((await t.request('GET', `/v1/tenants/${T}/publish-requests/${asked.json.id}`)).json.status).toBe('pending');

    // With only the test the admin forced past, the editor's approval publishes the reviewed content.
    await putTests([test('research bot queries knowledge')]);
    const approved = await t.request('POST', `/v1/tenants/${T}/publish-requests/${asked.json.id}/approve`, { body: { reason: 'ok' }, token: reviewer });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.json.revision).toBe(asked.json.revision);
    expect(await versions()).toBe(before + 1);
  });
});
