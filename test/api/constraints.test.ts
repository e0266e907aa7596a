// Argument constraints through the API: saved by one judge (pointers into the policy), tried by
// simulate's sample calls, expected by policy tests, and compiled into the bundle.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

const base = '/v1/tenants/acme-research';
const analyst = { subject: 'agent:analysis-bot', groups: ['knowledge', 'text'] };

const plainQueries = {
  tools: ['core__knowledge-*'],
  otherwise: 'deny',
  arguments: { properties: { query: { type: 'string', pattern: '^[a-z ]*$' } } },
  reason: 'queries are plain lowercase words',
};
const longCompletions = {
  tools: ['core__text-completion'],
  otherwise: 'require_approval',
  arguments: { properties: { maxTokens: { maximum: 1000 } } },
  reason: 'long completions need a person',
};

async function putPolicy(edit: (policy: Record<string, any>) => void) {
  const cur = await t.request('GET', `${base}/policy`);
  const policy = structuredClone(cur.json);
  delete policy.version;
  delete policy.updatedAt;
  edit(policy);
  return t.request('PUT', `${base}/policy`, { body: policy, headers: { 'if-match': cur.headers.get('etag')! } });
}

async function putTests(tests: unknown[]) {
  const cur = await t.request('GET', `${base}/tests`);
  return t.request('PUT', `${base}/tests`, { body: { tests }, headers: { 'if-match': cur.headers.get('etag')!, 'toolgate-reason': 'constraint tests' } });
}

describe('saving argument constraints', () => {
  it('refuses a pattern outside the regular-expression dialect, naming its pointer', async () => {
    const r = await putPolicy((p) => {
      p.roles.analyst.constraints = [{ ...plainQueries, arguments: { properties: { query: { type: 'string', pattern: '(?<=a)b' } } } }];
    });
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain('/roles/analyst/constraints/0/arguments/properties/query/pattern');
  });

  it('refuses an exact tool id that names no tool, as allow and deny do', async () => {
    const r = await putPolicy((p) => {
      p.roles.analyst.constraints = [{ ...plainQueries, tools: ['core__no-such-tool'] }];
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toContainEqual(expect.objectContaining({ pointer: '/roles/analyst/constraints/0/tools/0', code: 'unknown_reference' }));
  });

  it('refuses a schema that is not JSON Schema, a root type other than object, a bad otherwise, a missing reason and too many constraints', async () => {
    const cases: [unknown, string][] = [
      [[{ ...plainQueries, arguments: { properties: { query: { type: 'text' } } } }], '/roles/analyst/constraints/0/arguments/properties/query/type'],
      [[{ ...plainQueries, arguments: { type: 'string' } }], '/roles/analyst/constraints/0/arguments/type'],
      [[{ ...plainQueries, otherwise: 'warn' }], '/roles/analyst/constraints/0/otherwise'],
      [[{ tools: plainQueries.tools, otherwise: 'deny', arguments: {} }], '/roles/analyst/constraints/0'],
      [Array.from({ length: 101 }, () => plainQueries), '/roles/analyst/constraints'],
    ];
    for (const [constraints, pointer] of cases) {
      const r = await putPolicy((p) => {
        p.roles.analyst.constraints = constraints;
      });
      expect(r.status, pointer).toBe(400);
      expect(
        r.json.errors.some((e: { pointer: string }) => e.pointer === pointer || e.pointer.startsWith(`${pointer}/`)),
        `${pointer} in ${JSON.stringify(r.json.errors)}`,
      ).toBe(true);
    }
    // Nothing of the refused saves was kept.
    expect((await t.request('GET', `${base}/policy`)).json.roles.analyst.constraints ?? []).toEqual([]);
  });

  it('refuses approval settings out of bounds and keeps the defaults when left out', async () => {
    const bad = await putPolicy((p) => {
      p.roles.analyst.approvals = { by: 'agent', validForSeconds: 10 };
    });
    expect(bad.status).toBe(400);
    const pointers = bad.json.errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toContain('/roles/analyst/approvals/by');
    expect(pointers).toContain('/roles/analyst/approvals/validForSeconds');
  });

  it('saves valid constraints and compiles them into the bundle in the order written', async () => {
    const r = await putPolicy((p) => {
      p.roles.analyst.constraints = [plainQueries, longCompletions];
      p.roles.analyst.approvals = { by: 'person' };
    });
    expect(r.status).toBe(200);
    const saved = (await t.request('GET', `${base}/policy`)).json;
    expect(saved.roles.analyst.constraints).toEqual([plainQueries, longCompletions]);
    expect(saved.roles.analyst.approvals).toEqual({ by: 'person', validForSeconds: 900 });
    const pub = await t.request('POST', `${base}/bundles`, { body: { reason: 'constraints' } });
    expect(pub.status).toBe(201);
    const bundle = (await t.request('GET', `${base}/bundles/latest`)).json;
    expect(bundle.policy.roles.analyst.constraints.map((c: { reason: string }) => c.reason)).toEqual([plainQueries.reason, longCompletions.reason]);
  });

  it('refuses deleting a tool that a constraint names exactly', async () => {
    const tool = await t.request('GET', '/v1/tools/core__text-completion');
    const r = await t.request('DELETE', '/v1/tools/core__text-completion', { headers: { 'if-match': tool.headers.get('etag')! } });
    expect(r.status).toBe(409);
    expect(JSON.stringify(r.json.errors)).toContain('constraints');
  });
});

describe('simulate tries calls', () => {
  it('answers each sample call with its decision and the constraint that decided, never echoing arguments', async () => {
    const r = await t.request('POST', `${base}/simulate`, {
      body: {
        ...analyst,
        calls: [
          { name: 'core__knowledge-query', arguments: { query: 'revenue by region' } },
          { name: 'core__knowledge-query', arguments: { query: 'SELECT secret_token_42' } },
          { name: 'core__text-completion', arguments: '{"prompt":"hi","maxTokens":4000}' },
          { name: 'core__knowledge-query', arguments: '{' },
          { name: 'core__no-such-tool' },
        ],
      },
    });
    expect(r.status).toBe(200);
    const query = r.json.tools.find((x: { id: string }) => x.id === 'core__knowledge-query');
    expect(query.constraints).toEqual([{ role: 'analyst', index: 0, otherwise: 'deny', reason: plainQueries.reason }]);
    const [ok, denied, approval, badJson, unknown] = r.json.calls;
    expect(ok).toEqual({ name: 'core__knowledge-query', decision: 'allow' });
    expect(denied).toMatchObject({
      decision: 'deny',
      errorCode: 'policy_denied',
      constraint: { role: 'analyst', index: 0, reason: plainQueries.reason },
    });
    expect(JSON.stringify(denied)).not.toContain('secret_token_42');
    expect(approval).toMatchObject({ decision: 'require_approval', constraint: { role: 'analyst', index: 1, otherwise: 'require_approval' } });
    expect(badJson).toMatchObject({ decision: 'deny', errorCode: 'invalid_json' });
    expect(unknown).toMatchObject({ decision: 'deny', errorCode: 'unavailable' });
  });

  it('tries calls against an unsaved policy', async () => {
    const policy = (await t.request('GET', `${base}/policy`)).json;
    policy.roles.analyst.constraints = [];
    const r = await t.request('POST', `${base}/simulate`, {
      body: { ...analyst, policy, calls: [{ name: 'core__knowledge-query', arguments: { query: 'SELECT 1' } }] },
    });
    expect(r.status).toBe(200);
    expect(r.json.calls).toEqual([{ name: 'core__knowledge-query', decision: 'allow' }]);
  });

  it('refuses malformed sample calls with a pointer', async () => {
    const cases: [unknown, string][] = [
      [[{ arguments: {} }], '/calls/0'],
      [[{ name: 'core__knowledge-query', arguments: 5 }], '/calls/0/arguments'],
      [Array.from({ length: 51 }, () => ({ name: 'core__knowledge-query' })), '/calls'],
    ];
    for (const [calls, pointer] of cases) {
      const r = await t.request('POST', `${base}/simulate`, { body: { ...analyst, calls } });
      expect(r.status).toBe(400);
      expect(r.json.errors.some((e: { pointer: string }) => e.pointer.startsWith(pointer))).toBe(true);
    }
  });
});

describe('policy tests with calls', () => {
  const callTest = (decision: string, errorCode?: string) => ({
    name: `odd query is ${decision}`,
    request: analyst,
    expect: { calls: [{ name: 'core__knowledge-query', arguments: { query: 'DROP TABLE' }, decision, ...(errorCode ? { errorCode } : {}) }] },
  });

  it('passes a call expectation decide meets, and fails one it does not, naming the call and the constraint seen', async () => {
    expect((await putTests([callTest('deny', 'policy_denied')])).status).toBe(200);
    const pass = await t.request('POST', `${base}/simulate`, { body: analyst });
    expect(pass.json.tests).toEqual([{ name: 'odd query is deny', passed: true, failures: [] }]);

    const fail = await t.request('POST', `${base}/simulate`, { body: { ...analyst, tests: [callTest('allow')] } });
    const [outcome] = fail.json.tests;
    expect(outcome.passed).toBe(false);
    expect(outcome.failures[0].pointer).toBe('/tests/0/expect/calls/0');
    expect(outcome.failures[0].seen).toContain(plainQueries.reason);
    expect(outcome.failures[0].seen).not.toContain('DROP');
  });

  it('refuses a publish when a call expectation fails', async () => {
    expect((await putTests([callTest('allow')])).status).toBe(200);
    const r = await t.request('POST', `${base}/bundles`, { body: { reason: 'should be refused' } });
    expect(r.status).toBe(422);
    expect(r.json.code).toBe('tests_failed');
    expect(r.json.errors[0].pointer).toBe('/tests/0/expect/calls/0');
    expect((await putTests([])).status).toBe(200);
  });

  it('refuses a call naming an unknown tool unless the test expects it to be unavailable', async () => {
    const unknown = { name: 'x', request: analyst, expect: { calls: [{ name: 'core__typo', decision: 'allow' }] } };
    const r = await putTests([unknown]);
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/tests/0/expect/calls/0/name');
    const meant = { name: 'x', request: analyst, expect: { calls: [{ name: 'core__typo', decision: 'deny', errorCode: 'unavailable' }] } };
    expect((await putTests([meant])).status).toBe(200);
    expect((await putTests([])).status).toBe(200);
  });
});

describe('impact of a draft on constraint outcomes', () => {
  it('lists per tool the constraints the draft adds or removes for logged calls, and records carry the deciding constraint only', async () => {
    const runtime = await t.tokenFor('runtime', ['acme-research']);
    const version = (await t.request('GET', `${base}/bundles`)).json.items[0].version;
    // The published version holds both constraints: a call denied by the first, two asking approval by the second.
    const record = (tool: string, over: Record<string, unknown>, i: number) => ({
      at: new Date(Date.now() - 60_000 + i).toISOString(),
      toolCallId: `constraint-${tool}-${i}`,
      subject: analyst.subject,
      groups: analyst.groups,
      state: 'undefined',
      tool,
      bundleVersion: version,
      ...over,
    });
    const records = [
      record(
        'core__knowledge-query',
        { decision: 'deny', errorCode: 'policy_denied', constraint: { role: 'analyst', index: 0, otherwise: 'deny', reason: plainQueries.reason } },
        1,
      ),
      record(
        'core__text-completion',
        { decision: 'require_approval', constraint: { role: 'analyst', index: 1, otherwise: 'require_approval', reason: longCompletions.reason } },
        2,
      ),
      record(
        'core__text-completion',
        { decision: 'require_approval', constraint: { role: 'analyst', index: 1, otherwise: 'require_approval', reason: longCompletions.reason } },
        3,
      ),
    ];
    const posted = await t.request('POST', `${base}/decisions`, { token: runtime, body: { runtimeId: 'constraint-impact', records } });
    expect(posted.status).toBe(202);
    // A record holding arguments is refused: records never carry them.
    const leaky = await t.request('POST', `${base}/decisions`, {
      token: runtime,
      body: { runtimeId: 'constraint-impact', records: [{ ...records[0], arguments: { query: 'x' } }] },
    });
    expect(leaky.status).toBe(400);

    const policy = (await t.request('GET', `${base}/policy`)).json;
    policy.roles.analyst.constraints = [longCompletions, { ...plainQueries, otherwise: 'require_approval' }];
    const r = await t.request('POST', `${base}/impact`, { body: { policy } });
    expect(r.status).toBe(200);
    expect(r.json.constraints).toEqual(
      expect.arrayContaining([
        { tool: 'core__knowledge-query', change: 'removed', role: 'analyst', index: 0, otherwise: 'deny', reason: plainQueries.reason, calls: 1 },
        { tool: 'core__knowledge-query', change: 'added', role: 'analyst', index: 1, otherwise: 'require_approval', reason: plainQueries.reason, calls: 1 },
      ]),
    );
    // The approval constraint is unchanged (moved to index 0): no change reported for it, and its
    // logged approvals are not mistaken for name-level approvals the draft would drop.
    expect(r.json.constraints.filter((c: { tool: string }) => c.tool === 'core__text-completion')).toEqual([]);
    expect(r.json.byTool.find((k: { key: string }) => k.key === 'core__text-completion')).toBeUndefined();
  });
});
