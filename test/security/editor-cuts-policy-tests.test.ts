// Policy tests are a net editors may add to but not cut. The attack: an editor deletes the failing
// test (or the one expectation that fails), publishes, and puts it back. Every way of cutting the
// net through PUT /v1/tenants/:tenant/tests is a 403 naming what was cut; adding stays open;
// admins may cut, and only admins may force a publish past a failing test (audited as forced).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PolicyTest } from '../../policy-schemas/types.gen.ts';
import { cutsOf } from '../../server/validation/policy-tests.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

const TENANT = 'acme-research';
const NET: PolicyTest[] = [
  {
    name: 'research bot can query knowledge',
    request: { subject: 'agent:research-bot', groups: ['knowledge'] },
    expect: { visible: ['core__knowledge-query'], decisions: { 'core__knowledge-query': 'allow' } },
  },
  {
    name: 'research bot never resets the workflow',
    request: { subject: 'agent:research-bot', groups: ['knowledge'] },
    expect: { hidden: { 'core__reset-workflow': 'group' } },
  },
  { name: 'no one asks for made-up groups', request: { subject: 'agent:research-bot', groups: ['made-up'] }, expect: { rejected: true } },
  {
    name: 'research bot may call the knowledge query',
    request: { subject: 'agent:research-bot', groups: ['knowledge'] },
    expect: { calls: [{ name: 'core__knowledge-query', decision: 'allow' }] },
  },
];

let t: TestApp;
let editor: string;

beforeAll(async () => {
  t = await startTestApp();
  editor = await t.tokenFor('editor', [TENANT]);
});
afterAll(async () => t?.close());

async function current() {
  const r = await t.request('GET', `/v1/tenants/${TENANT}/tests`);
  return { tests: r.json.tests as PolicyTest[], etag: r.headers.get('etag') as string, version: r.json.version as number };
}
async function put(tests: PolicyTest[], token?: string) {
  const { etag } = await current();
  return t.request('PUT', `/v1/tenants/${TENANT}/tests`, { token, body: { tests }, headers: { 'if-match': etag, 'toolgate-reason': 'net' } });
}
const edited = (f: (tests: PolicyTest[]) => void) => {
  const tests = structuredClone(NET);
  f(tests);
  return tests;
};

beforeEach(async () => {
  expect((await put(NET)).status).toBe(200);
});

describe('an editor cutting the policy tests', () => {
  const cuts: [string, PolicyTest[], string][] = [
    ['deletes a test', edited((ts) => ts.splice(1, 1)), '/tests/1'],
    ['renames a test', edited((ts) => (ts[0].name = 'research bot can query knowledge (old)')), '/tests/0'],
    ['changes what a test asks', edited((ts) => (ts[0].request = { subject: 'agent:someone-else' })), '/tests/0/request'],
    ['drops a visible id', edited((ts) => (ts[0].expect = { decisions: ts[0].expect.decisions })), '/tests/0/expect/visible/0'],
    ['drops a decision', edited((ts) => delete ts[0].expect.decisions), '/tests/0/expect/decisions/core__knowledge-query'],
    [
      'changes a decision',
      edited((ts) => (ts[0].expect.decisions = { 'core__knowledge-query': 'require_approval' })),
      '/tests/0/expect/decisions/core__knowledge-query',
    ],
    ['drops a hidden entry', edited((ts) => (ts[1].expect = { visible: ['core__knowledge-query'] })), '/tests/1/expect/hidden/core__reset-workflow'],
    [
      'changes a hidden reason',
      edited((ts) => (ts[1].expect.hidden = { 'core__reset-workflow': 'not_allowed' })),
      '/tests/1/expect/hidden/core__reset-workflow',
    ],
    ['drops rejected', edited((ts) => (ts[2].expect = { visible: [] })), '/tests/2/expect/rejected'],
    ['flips rejected', edited((ts) => (ts[2].expect.rejected = false)), '/tests/2/expect/rejected'],
    ['drops a call', edited((ts) => (ts[3].expect = { visible: ['core__knowledge-query'] })), '/tests/3/expect/calls/0'],
    ['changes a call', edited((ts) => (ts[3].expect.calls = [{ name: 'core__knowledge-query', decision: 'deny' }])), '/tests/3/expect/calls/0'],
    ['empties the list', [], '/tests/0'],
  ];
  for (const [how, tests, pointer] of cuts) {
    it(`${how}: 403 naming ${pointer}, nothing saved`, async () => {
      const before = await current();
      const r = await put(tests, editor);
      expect(r.status).toBe(403);
      expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(r.json.code).toBe('forbidden');
      expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
      expect(r.json.detail).toMatch(/an admin's change/);
      const after = await current();
      expect(after.version).toBe(before.version);
      expect(after.tests).toEqual(NET);
    });
  }

  it('may add tests and expectations, and reorder them', async () => {
    const more = edited((ts) => {
      ts.reverse();
      ts[0].expect.calls?.push({ name: 'core__text-completion', decision: 'allow' });
      ts[3].expect.hidden = { 'core__reset-workflow': 'group' };
      ts.push({ name: 'a new one', request: { subject: 'agent:research-bot' }, expect: { visible: ['core__text-completion'] } });
    });
    const r = await put(more, editor);
    expect(r.status).toBe(200);
    expect((await current()).tests).toEqual(more);
  });

  it('is open to an admin, audited as the change it is', async () => {
    const r = await put([NET[0]]);
    expect(r.status).toBe(200);
    const audit = await t.request('GET', '/v1/audit?entityType=tests&order=desc&limit=1');
    expect(audit.json.items[0]).toMatchObject({ action: 'update', actor: 'token:bootstrap-admin', before: { tests: NET }, after: { tests: [NET[0]] } });
  });
});

describe('the attack end to end: delete the failing test, publish, put it back', () => {
  it('is refused at the first step; the editor cannot force; an admin forcing is audited as forced', async () => {
    const failing: PolicyTest = {
      name: 'research bot sees the workflow reset',
      request: { subject: 'agent:research-bot', groups: ['knowledge'] },
      expect: { visible: ['core__reset-workflow'] },
    };
    expect((await put([...NET, failing])).status).toBe(200);
    const publish = (token: string | undefined, body: Record<string, unknown>) => t.request('POST', `/v1/tenants/${TENANT}/bundles`, { token, body });
    expect((await publish(editor, { reason: 'ship it' })).status).toBe(422);
    expect((await put(NET, editor)).status).toBe(403);
    expect((await publish(editor, { reason: 'ship it', force: true })).status).toBe(403);
    const forced = await publish(undefined, { reason: 'known failure, fixed next', force: true });
    expect(forced.status).toBe(201);
    const audit = await t.request('GET', `/v1/audit?entityType=bundle&action=publish&tenant=${TENANT}&order=desc&limit=1`);
    expect(audit.json.items[0]).toMatchObject({
      reason: 'known failure, fixed next',
      after: {
        version: forced.json.version,
        forced: { failures: expect.arrayContaining([expect.objectContaining({ pointer: '/tests/4/expect/visible/0' })]) },
      },
    });
  });
});

describe('an editor promoting another tenant over the tests', () => {
  it("cannot cut the target's tests that way either; may promote what only adds; an admin may", async () => {
    const PROD = 'acme-prod-cuts';
    expect((await t.request('POST', '/v1/tenants', { body: { id: PROD, name: 'Production' } })).status).toBe(201);
    const both = await t.tokenFor('editor', [TENANT, PROD]);
    const prodTests = async () => (await t.request('GET', `/v1/tenants/${PROD}/tests`)).json;
    const putProd = async (tests: PolicyTest[]) =>
      t.request('PUT', `/v1/tenants/${PROD}/tests`, { body: { tests }, headers: { 'if-match': `"${(await prodTests()).version}"` } });
    expect((await putProd([...NET, { name: 'production only', request: { subject: 'agent:x' }, expect: { rejected: false } }])).status).toBe(200);
    const before = await prodTests();
    const promote = (token?: string) => t.request('POST', `/v1/tenants/${TENANT}/promote`, { token, body: { to: PROD, reason: 'ship staging' } });

    const cut = await promote(both);
    expect(cut.status).toBe(403);
    expect(cut.json.errors.map((e: { pointer: string }) => e.pointer)).toEqual([`/tenants/${PROD}/tests/4`]);
    expect(await prodTests()).toEqual(before);

    expect((await putProd(NET)).status).toBe(200);
    expect((await promote(both)).status).toBe(200);
    expect((await putProd([{ name: 'production only', request: { subject: 'agent:x' }, expect: { rejected: false } }])).status).toBe(200);
    expect((await promote()).status).toBe(200);
    expect((await prodTests()).tests).toEqual(NET);
  });
});

describe('cutsOf', () => {
  it('sees a duplicate call removed and keeps the other', () => {
    const twice = edited((ts) => ts[3].expect.calls?.push({ name: 'core__knowledge-query', decision: 'allow' }));
    expect(cutsOf(twice, NET).map((c) => c.pointer)).toEqual(['/tests/3/expect/calls/1']);
    expect(cutsOf(NET, twice)).toEqual([]);
  });

  it('treats call arguments by value, not by key order', () => {
    const a = edited((ts) => (ts[3].expect.calls = [{ name: 'core__knowledge-query', decision: 'allow', arguments: { q: 1, r: 2 } }]));
    const b = edited((ts) => (ts[3].expect.calls = [{ decision: 'allow', arguments: { r: 2, q: 1 }, name: 'core__knowledge-query' }]));
    expect(cutsOf(a, b)).toEqual([]);
  });

  it('escapes ids in pointers', () => {
    const odd = [{ name: 'x', request: { subject: 's' }, expect: { hidden: { 'a/b~c': 'group' as const } } }];
    expect(cutsOf(odd, [{ ...odd[0], expect: { visible: [] } }])[0].pointer).toBe('/tests/0/expect/hidden/a~1b~0c');
  });
});
