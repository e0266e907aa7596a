import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishBundle } from '../../server/compiler/publish.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const researchBotSeesKnowledge = {
  name: 'research bot can query knowledge',
  request: { subject: 'agent:research-bot', groups: ['knowledge'] },
  expect: { visible: ['core__knowledge-query'], decisions: { 'core__knowledge-query': 'allow' } },
};
const researchBotCannotReset = {
  name: 'research bot never resets the workflow',
  request: { subject: 'agent:research-bot', groups: ['knowledge'] },
  expect: { hidden: { 'core__reset-workflow': 'group' } },
};

async function putTests(tenant: string, tests: unknown[], token?: string) {
  const cur = await t.request('GET', `/v1/tenants/${tenant}/tests`);
  return t.request('PUT', `/v1/tenants/${tenant}/tests`, {
    body: { tests },
    headers: { 'if-match': cur.headers.get('etag')!, 'toolgate-reason': 'tests for the test' },
    token,
  });
}

async function hideKnowledgeQuery() {
  const pol = await t.request('GET', '/v1/tenants/acme-research/policy');
  const policy = structuredClone(pol.json);
  policy.roles.researcher.allow = ['core__text-completion'];
  const r = await t.request('PUT', '/v1/tenants/acme-research/policy', { body: policy, headers: { 'if-match': pol.headers.get('etag')! } });
  expect(r.status).toBe(200);
  return async () => {
    const now = await t.request('GET', '/v1/tenants/acme-research/policy');
    policy.roles.researcher.allow = ['core__knowledge-query', 'core__text-completion'];
    expect((await t.request('PUT', '/v1/tenants/acme-research/policy', { body: policy, headers: { 'if-match': now.headers.get('etag')! } })).status).toBe(200);
  };
}

describe('policy tests', () => {
  it('start empty, are versioned with If-Match and audited', async () => {
    const first = await t.request('GET', '/v1/tenants/acme-research/tests');
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ tests: [], tenant: 'acme-research', version: 1 });
    expect(first.headers.get('etag')).toBe('"1"');
    const noIfMatch = await t.request('PUT', '/v1/tenants/acme-research/tests', { body: { tests: [] } });
    expect(noIfMatch.status).toBe(428);
    const saved = await putTests('acme-research', [researchBotSeesKnowledge]);
    expect(saved.status).toBe(200);
    expect(saved.json.version).toBe(2);
    const stale = await t.request('PUT', '/v1/tenants/acme-research/tests', { body: { tests: [] }, headers: { 'if-match': '"1"' } });
    expect(stale.status).toBe(412);
    expect((await t.request('GET', '/v1/tenants/acme-research/tests')).json.tests).toEqual([researchBotSeesKnowledge]);
    const audit = await t.request('GET', '/v1/audit?entityType=tests&order=desc');
    expect(audit.json.items[0]).toMatchObject({
      action: 'update',
      entityType: 'tests',
      entityId: 'acme-research',
      reason: 'tests for the test',
      before: { tests: [] },
      after: { tests: [researchBotSeesKnowledge] },
    });
  });

  it('refuses bad tests with a pointer to each problem and changes nothing', async () => {
    const before = await t.request('GET', '/v1/tenants/acme-research/tests');
    const shape = await putTests('acme-research', [
      { name: 'x', request: { subject: 'a' }, expect: {} },
      { name: 'y', request: {}, expect: { hidden: { core__x: 'nope' } } },
    ]);
    expect(shape.status).toBe(400);
    const pointers = shape.json.errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/tests/0/expect', '/tests/1/request/subject', '/tests/1/expect/hidden/core__x']));
    const refs = await putTests('acme-research', [
      researchBotSeesKnowledge,
      { ...researchBotCannotReset, name: researchBotSeesKnowledge.name },
      { name: 'typo', request: { subject: 'a' }, expect: { visible: ['core__knowledge-qurey'] } },
    ]);
    expect(refs.status).toBe(400);
    expect(refs.json.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ pointer: '/tests/1/name' }),
        expect.objectContaining({ pointer: '/tests/2/expect/visible/0', message: 'unknown tool "core__knowledge-qurey"' }),
      ]),
    );
    const unknownTenant = await t.request('PUT', '/v1/tenants/nope/tests', { body: { tests: [] }, headers: { 'if-match': '"1"' } });
    expect(unknownTenant.status).toBe(404);
    const after = await t.request('GET', '/v1/tenants/acme-research/tests');
    expect(after.json).toEqual(before.json);
  });

  it('keep each tenant to its own tests: a viewer reads, only editors of the tenant write', async () => {
    const viewer = await t.tokenFor('viewer', ['acme-research']);
    expect((await t.request('GET', '/v1/tenants/acme-research/tests', { token: viewer })).status).toBe(200);
    expect((await t.request('GET', '/v1/tenants/globex-eng/tests', { token: viewer })).status).toBe(404);
    expect((await putTests('acme-research', [], viewer)).status).toBe(403);
    const otherEditor = await t.tokenFor('editor', ['globex-eng']);
    expect(
      (await t.request('PUT', '/v1/tenants/acme-research/tests', { token: otherEditor, body: { tests: [] }, headers: { 'if-match': '"2"' } })).status,
    ).toBe(404);
  });

  it('simulate reports every test on the draft, on an unsaved policy, and runs unsaved tests', async () => {
    const sim = await t.request('POST', '/v1/tenants/acme-research/simulate', { body: { subject: 'agent:research-bot' } });
    expect(sim.status).toBe(200);
    expect(sim.json.tests).toEqual([{ name: researchBotSeesKnowledge.name, passed: true, failures: [] }]);
    const pol = (await t.request('GET', '/v1/tenants/acme-research/policy')).json;
    const unsaved = structuredClone(pol);
    unsaved.roles.researcher.allow = ['core__text-completion'];
    const edited = await t.request('POST', '/v1/tenants/acme-research/simulate', { body: { subject: 'agent:research-bot', policy: unsaved } });
    expect(edited.json.tests[0].passed).toBe(false);
    expect(edited.json.tests[0].failures).toEqual([
      {
        pointer: '/tests/0/expect/visible/0',
        expected: 'core__knowledge-query visible',
        seen: 'core__knowledge-query hidden (not_allowed)',
        message: 'test "research bot can query knowledge": expected core__knowledge-query visible, saw core__knowledge-query hidden (not_allowed)',
      },
      expect.objectContaining({ pointer: '/tests/0/expect/decisions/core__knowledge-query', seen: 'core__knowledge-query hidden (not_allowed)' }),
    ]);
    const rejected = await t.request('POST', '/v1/tenants/acme-research/simulate', {
      body: {
        subject: 'agent:research-bot',
        tests: [{ name: 'no admin group', request: { subject: 'agent:research-bot', groups: ['admin'] }, expect: { rejected: false } }, researchBotCannotReset],
      },
    });
    expect(rejected.json.tests.map((o: { passed: boolean }) => o.passed)).toEqual([false, true]);
    expect(rejected.json.tests[0].failures[0]).toMatchObject({
      pointer: '/tests/0/expect/rejected',
      seen: 'the whole request rejected (group_not_permitted: admin)',
    });
    // Without tests the answer is exactly evaluate()'s.
    const none = await t.request('POST', '/v1/tenants/globex-eng/simulate', { body: { subject: 'agent:coding-bot' } });
    expect(none.json).not.toHaveProperty('tests');
  });

  it('gate a publish: a change hiding a tested tool is refused with one error per failed expectation', async () => {
    const first = await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'baseline' } });
    expect(first.status).toBe(201);
    const restore = await hideKnowledgeQuery();
    const refused = await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'narrow the researcher' } });
    expect(refused.status).toBe(422);
    expect(refused.json.code).toBe('tests_failed');
    expect(refused.json.errors).toEqual([
      { pointer: '/tests/0/expect/visible/0', message: expect.stringContaining('saw core__knowledge-query hidden (not_allowed)'), code: 'test_failed' },
      { pointer: '/tests/0/expect/decisions/core__knowledge-query', message: expect.stringContaining('hidden (not_allowed)'), code: 'test_failed' },
    ]);
    expect((await t.request('GET', '/v1/tenants/acme-research/bundles')).json.items).toHaveLength(1);

    const editor = await t.tokenFor('editor', ['acme-research']);
    const editorForce = await t.request('POST', '/v1/tenants/acme-research/bundles', { token: editor, body: { reason: 'I insist', force: true } });
    expect(editorForce.status).toBe(403);

    const forced = await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'knowledge query is being retired', force: true } });
    expect(forced.status).toBe(201);
    const audit = await t.request('GET', '/v1/audit?entityType=bundle&tenant=acme-research&order=desc');
    expect(audit.json.items[0]).toMatchObject({
      action: 'publish',
      reason: 'knowledge query is being retired',
      after: {
        version: 2,
        forced: {
          failures: [
            expect.objectContaining({ pointer: '/tests/0/expect/visible/0' }),
            expect.objectContaining({ pointer: '/tests/0/expect/decisions/core__knowledge-query' }),
          ],
        },
      },
    });
    expect(audit.json.items[1].after).not.toHaveProperty('forced');
    await restore();
  });

  it('gate a rollback too, naming the failing tests of the version rolled back to', async () => {
    // Version 2 hides knowledge-query; the tests say it must be visible.
    const refused = await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'back to 2', rollbackTo: 2 } });
    expect(refused.status).toBe(422);
    expect(refused.json.code).toBe('tests_failed');
    expect(refused.json.detail).toContain('version 2');
    expect(refused.json.errors[0].pointer).toBe('/tests/0/expect/visible/0');
    const ok = await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'back to 1', rollbackTo: 1 } });
    expect(ok.status).toBe(201);
    const forced = await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'back to 2 anyway', rollbackTo: 2, force: true } });
    expect(forced.status).toBe(201);
    const audit = await t.request('GET', '/v1/audit?entityType=bundle&tenant=acme-research&order=desc');
    expect(audit.json.items[0]).toMatchObject({ action: 'rollback', after: { rollbackOf: 2, forced: { failures: [expect.anything(), expect.anything()] } } });
  });

  it('publishes only the draft its tests ran on: a draft changed meanwhile is a 409, nothing published', async () => {
    const versions = (await t.request('GET', '/v1/tenants/acme-research/bundles')).json.items.length;
    const meta = { actor: 'system', requestId: null, reason: 'raced' };
    const publish = publishBundle(t.deps, meta, 'acme-research', { refresh: true, testedRevision: `sha256:${'0'.repeat(64)}` }, t.deps.keys);
    await expect(publish).rejects.toMatchObject({ status: 409, code: 'conflict' });
    expect((await t.request('GET', '/v1/tenants/acme-research/bundles')).json.items).toHaveLength(versions);
  });

  it("new tenants start with no tests, and their tests go when they go (kept in the deletion's audit event)", async () => {
    const created = await t.request('POST', '/v1/tenants', { body: { id: 'fresh', name: 'Fresh' } });
    expect(created.status).toBe(201);
    expect((await t.request('GET', '/v1/tenants/fresh/tests')).json).toMatchObject({ tests: [], version: 1 });
    const cur = await t.request('GET', '/v1/tenants/fresh/tests');
    const kept = [{ name: 'fresh test', request: { subject: 'agent:x' }, expect: { rejected: false } }];
    expect((await t.request('PUT', '/v1/tenants/fresh/tests', { headers: { 'if-match': cur.headers.get('etag')! }, body: { tests: kept } })).status).toBe(200);
    expect((await t.request('DELETE', '/v1/tenants/fresh', { headers: { 'if-match': '"1"' } })).status).toBe(204);
    // The audit event of the deletion keeps what went with the tenant.
    const audit = await t.request('GET', '/v1/audit?entityType=tenant&entityId=fresh&action=delete');
    expect(audit.json.items[0].before.tests).toEqual(kept);
    expect((await t.request('GET', '/v1/tenants/fresh/tests')).status).toBe(404);
  });
});
