import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { etag } from './support.ts';

// Reasons with control characters were refused, but every other label or name a person reads
// (token labels, tenant names, MCP server and grant labels, policy test names) took NUL, ANSI
// escapes and bidirectional overrides, and kept them in the audit log forever: an editor could
// put a terminal escape in a test name that the CLI and the audit export replay later.

const hostile: [string, string][] = [
  ['NUL', 'deploy\u0000now'],
  ['an ANSI escape', 'fix \u001b[2J\u001b[Hcleared your terminal'],
  ['a carriage return', 'a\rforged line'],
  ['a line feed', 'two\nlines'],
  ['a tab', 'tab\there'],
  ['DEL', 'del\u007f'],
  ['a C1 control', 'c1 \u009b31m'],
  ['a right-to-left override', 'rtl \u202egnp.exe'],
  ['a bidirectional isolate', 'isolate \u2066x\u2069'],
];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

async function auditCount(): Promise<number> {
  return (await t.request('GET', '/v1/audit?limit=1')).json.items[0].seq as number;
}

type Attempt = { what: string; pointer: string; send: (text: string) => Promise<{ status: number; json: any }> };
const attempts: Attempt[] = [
  {
    what: 'a token label',
    pointer: '/label',
    send: (text) => t.request('POST', '/v1/tokens', { body: { label: text, role: 'viewer', tenants: ['acme-research'] } }),
  },
  { what: 'a tenant name', pointer: '/name', send: (text) => t.request('POST', '/v1/tenants', { body: { id: 'ctl-tenant', name: text } }) },
  {
    what: 'a renamed tenant',
    pointer: '/name',
    send: async (text) =>
      t.request('PATCH', '/v1/tenants/acme-research', {
        headers: { 'if-match': await etag(t, '/v1/tenants/acme-research'), 'content-type': 'application/merge-patch+json' },
        body: { name: text },
      }),
  },
  {
    what: 'an MCP server label',
    pointer: '/label',
    send: (text) =>
      t.request('POST', '/v1/mcp-servers', { body: { id: 'ctl-server', label: text, transport: { kind: 'http', url: 'https://mcp.example.com/mcp' } } }),
  },
  {
    what: 'a policy test name',
    pointer: '/tests/0/name',
    send: async (text) =>
      t.request('PUT', '/v1/tenants/acme-research/tests', {
        headers: { 'if-match': await etag(t, '/v1/tenants/acme-research/tests') },
        body: { tests: [{ name: text, request: { subject: 'agent:research-bot' }, expect: { rejected: false } }] },
      }),
  },
];

describe('labels and names refuse control characters and bidirectional overrides', () => {
  for (const a of attempts) {
    for (const [kind, text] of hostile) {
      it(`refuses ${a.what} with ${kind}, naming ${a.pointer}, and writes nothing`, async () => {
        const before = await auditCount();
        const r = await a.send(text);
        expect(r.status).toBe(400);
        expect(r.json.errors).toEqual([expect.objectContaining({ pointer: a.pointer })]);
        expect(await auditCount()).toBe(before);
      });
    }
  }

  it('refuses a grant label with an ANSI escape', async () => {
    const grants = (await t.request('GET', '/v1/tenants/acme-research/grants')).json;
    const grant = (grants.items ?? grants)[0];
    const path = `/v1/tenants/acme-research/grants/${grant.connectionId}`;
    const current = (await t.request('GET', path)).json;
    const r = await t.request('PUT', path, { headers: { 'if-match': await etag(t, path) }, body: { ...current, label: 'prod \u001b[31m' } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/label' })]);
  });

  it('still takes any printable text, accents, scripts and emoji sequences', async () => {
    const label = 'Équipe 日本 👩‍👩‍👧 (prod) — “ops” #1';
    const r = await t.request('POST', '/v1/tokens', { body: { label, role: 'viewer', tenants: ['acme-research'] } });
    expect(r.status).toBe(201);
    expect(r.json.label).toBe(label);
    const tests = await t.request('PUT', '/v1/tenants/acme-research/tests', {
      headers: { 'if-match': await etag(t, '/v1/tenants/acme-research/tests') },
      body: { tests: [{ name: label, request: { subject: 'agent:research-bot' }, expect: { rejected: false } }] },
    });
    expect(tests.status).toBe(200);
  });
});
