import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

// Every write route of the core API, with bodies of every wrong shape: none may cause a 500 or
// change anything.
const routes: [string, string][] = [
  ['POST', '/v1/tools'],
  ['PUT', '/v1/tools/core__knowledge-query'],
  ['PATCH', '/v1/tools/core__knowledge-query'],
  ['POST', '/v1/groups'],
  ['PUT', '/v1/groups/read-only'],
  ['PATCH', '/v1/groups/read-only'],
  ['POST', '/v1/states'],
  ['PUT', '/v1/states/research'],
  ['POST', '/v1/tenants'],
  ['PUT', '/v1/tenants/acme-research'],
  ['PATCH', '/v1/tenants/acme-research'],
  ['PUT', '/v1/tenants/acme-research/policy'],
  ['PUT', '/v1/tenants/acme-research/tests'],
  ['POST', '/v1/tenants/acme-research/simulate'],
  ['POST', '/v1/tenants/acme-research/grants'],
  ['PUT', '/v1/tenants/acme-research/grants/conn-knowledge-graph-prod'],
  ['POST', '/v1/tokens'],
  ['POST', '/v1/session'],
];

const deep = (n: number): string => `${'{"a":'.repeat(n)}{}${'}'.repeat(n)}`;
const bodies: [string, string][] = [
  ['null', 'null'],
  ['an array', '[]'],
  ['a string', '"tool"'],
  ['a number', '42'],
  [
    'wrong types everywhere',
    JSON.stringify({ id: 1, name: [], description: {}, inputSchema: 'x', effect: null, roles: 'all', connectionId: {}, label: 5, role: true }),
  ],
  ['nesting 10,000 levels deep', `{"id":"core__deep","description":"d","effect":"read_only","inputSchema":{"type":"object","properties":${deep(10_000)}}}`],
  ['unicode and control characters', JSON.stringify({ id: 'core__\u0000\u202e', name: '\ud83d\ude00', description: '\u0007' })],
  ['a prototype-polluting key', '{"__proto__": {"admin": true}, "constructor": {"prototype": {"x": 1}}}'],
  ['truncated JSON', '{"id": "core__x", "description": '],
  ['a huge string', JSON.stringify({ id: 'core__huge', description: 'x'.repeat(200_000), inputSchema: { type: 'object' }, effect: 'read_only' })],
];

describe('bad input never causes a 500 or a change', () => {
  for (const [method, path] of routes) {
    it(`${method} ${path}`, async () => {
      const seqBefore = (await t.request('GET', '/v1/audit/verify')).json.count;
      for (const [label, raw] of bodies) {
        const r = await t.request(method, path, { raw, headers: { 'if-match': '"1"' } });
        expect(r.status, `${label}: ${r.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
        expect(r.status, `${label}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
        expect(r.headers.get('content-type'), label).toContain('application/problem+json');
      }
      expect((await t.request('GET', '/v1/audit/verify')).json.count).toBe(seqBefore);
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
    });
  }
});

// PostgreSQL's text cannot hold U+0000 and SQLite's can: both must refuse it alike, naming where it is.
describe('NUL characters (U+0000)', () => {
  const nul = 'a\u0000b';
  it('are refused in any string of a body, with the pointer, and nothing is stored', async () => {
    const before = (await t.request('GET', '/v1/audit/verify')).json.count;
    const cases: [string, string, unknown, string][] = [
      ['POST', '/v1/tools', { id: 'core__nul', description: nul, inputSchema: { type: 'object' }, effect: 'read_only' }, '/description'],
      ['POST', '/v1/groups', { name: 'nul-group', description: 'fine', includes: [nul] }, '/includes/0'],
      ['PATCH', '/v1/tools/core__knowledge-query', { description: nul }, '/description'],
      ['POST', '/v1/tenants/acme-research/simulate', { requests: [{ subject: 'agent:x', facts: { [nul]: 1 } }] }, `/requests/0/facts/${nul}`],
      [
        'POST',
        '/v1/tenants/acme-research/decisions',
        {
          runtimeId: 'w1',
          records: [
            {
              at: new Date().toISOString(),
              toolCallId: nul,
              subject: 'agent:x',
              groups: [],
              state: 'undefined',
              tool: 'core__x',
              decision: 'allow',
              bundleVersion: 1,
            },
          ],
        },
        '/records/0/toolCallId',
      ],
    ];
    for (const [method, path, body, pointer] of cases) {
      const r = await t.request(method, path, { body, headers: { 'if-match': '"1"' } });
      expect(r.status, `${method} ${path}: ${r.text.slice(0, 200)}`).toBe(400);
      expect(r.json.errors).toContainEqual(expect.objectContaining({ pointer, message: expect.stringContaining('NUL character') }));
    }
    expect((await t.request('GET', '/v1/tools/core__nul')).status).toBe(404);
    expect((await t.request('GET', '/v1/tenants/acme-research/decisions')).json.items).toEqual([]);
    expect((await t.request('GET', '/v1/audit/verify')).json.count).toBe(before);
  });

  it('are refused in a path segment or a query value before any lookup', async () => {
    for (const path of ['/v1/tools/core__a%00b', '/v1/audit?actor=token%3Aa%00b', '/v1/tools?q=a%00', '/v1/tenants/acme-research/decisions?subject=a%00b']) {
      const r = await t.request('GET', path);
      expect(r.status, `${path}: ${r.text.slice(0, 200)}`).toBe(400);
      expect(r.json.detail).toContain('NUL character');
    }
  });
});

describe('inputs built to make the server work hard', () => {
  it('refuses a 1 MiB array of distinct groups promptly instead of comparing every pair', async () => {
    const groups = Array.from({ length: 100_000 }, (_, i) => `g${i}`);
    const r = await t.request('POST', '/v1/tenants/acme-research/simulate', { body: { subject: 'agent:x', groups } });
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain('/groups');
  });

  it('refuses globs with more than three stars, and matches long three-star globs linearly', async () => {
    const policy = (allow: string[]) => ({ roles: { evil: { groups: ['*'], allow } }, bindings: { 'agent:x': ['evil'] } });
    const tooMany = await t.request('POST', '/v1/tenants/globex-eng/simulate', { body: { subject: 'agent:x', policy: policy([`c${'*'.repeat(12)}Z`]) } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.errors[0].pointer).toBe('/policy/roles/evil/allow/0');
    const ok = await t.request('POST', '/v1/tenants/globex-eng/simulate', {
      body: { subject: 'agent:x', groups: ['*'], policy: policy(['c*o*r*e', '*__host_*']) },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.tools.map((x: { id: string }) => x.id)).toContain('core__host_session_open');
  });
});
