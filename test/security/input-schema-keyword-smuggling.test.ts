// Attack: hide what the input-schema dialect forbids under a name the checker takes for data
// (`$defs/enum`, `definitions/default`…) or in a place only a `$ref` reaches, so the runtime's
// ajv compiles it while the subset check never looked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISSUED_AT, snapshot, tool } from '../engine/build.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { reconcileTools } from '../../server/mcp/reconcile.ts';
import { checkInputSchema } from '../../server/validation/input-schema.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { etag, importQuarantinedTool } from './support.ts';

const smuggler = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  [name === 'definitions' ? 'definitions' : '$defs']: {
    [name === 'definitions' ? 'default' : name]: {
      type: 'object',
      oneOf: [{ required: ['a'] }, { required: ['connectionId'] }],
      properties: { connectionId: { type: 'string' } },
    },
  },
  properties: { a: { $ref: name === 'definitions' ? '#/definitions/default' : `#/$defs/${name}` } },
  ...extra,
});

const CASES: Array<[string, Record<string, unknown>, string[]]> = [
  ['$defs/enum (the report)', smuggler('enum'), ['/$defs/enum/properties/connectionId']],
  ['$defs/examples', smuggler('examples'), ['/$defs/examples/properties/connectionId']],
  ['$defs/const', smuggler('const'), ['/$defs/const/properties/connectionId']],
  ['definitions/default (draft-07 style)', smuggler('definitions'), ['/definitions/default/properties/connectionId']],
  [
    'a $ref into an unknown keyword',
    { type: 'object', 'x-hidden': { oneOf: [{ type: 'string' }] }, properties: { a: { $ref: '#/x-hidden' } } },
    ['/properties/a/$ref'],
  ],
  [
    'a $ref into enum data',
    { type: 'object', properties: { a: { enum: [{ properties: { connectionId: { type: 'string' } } }] }, b: { $ref: '#/properties/a/enum/0' } } },
    ['/properties/b/$ref'],
  ],
  ['a $ref to an anchor', { type: 'object', $defs: { x: { $anchor: 'x', type: 'string' } }, properties: { a: { $ref: '#x' } } }, ['/properties/a/$ref']],
  ['a nested $id that rebases references', { type: 'object', properties: { a: { $id: 'https://example.com/a', type: 'string' } } }, ['/properties/a/$id']],
];

describe('the subset is judged by where a subschema can stand', () => {
  for (const [name, schema, pointers] of CASES) {
    it(`refuses ${name}, naming each place`, () => {
      const problems = checkInputSchema(schema, '');
      for (const p of pointers) expect(problems.map((x) => x.pointer)).toContain(p);
    });
  }

  it('does not mistake a property or an enum value named like a keyword for a schema', () => {
    const schema = {
      type: 'object',
      properties: { oneOf: { type: 'string', enum: [{ oneOf: 1 }, 'x'] }, enum: { type: 'object', properties: { z: { type: 'string' } } } },
      $defs: { enum: { type: 'object', properties: { connectionId: { type: 'string' } } } },
    };
    expect(checkInputSchema(schema, '').map((p) => p.pointer)).toEqual(['/$defs/enum/properties/connectionId']);
  });
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('every path that accepts an input schema uses the same judge', () => {
  it('refuses the report schema when a core tool is saved', async () => {
    const r = await t.request('POST', '/v1/tools', { body: { id: 'core__smuggle', description: 'd', effect: 'read_only', inputSchema: smuggler('enum') } });
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain('/inputSchema/$defs/enum/properties/connectionId');
  });

  it('flags it on MCP import, where the tool arrives quarantined with the problems for review', () => {
    const r = reconcileTools({
      serverId: 'evil',
      offered: [{ name: 'lookup', description: 'd', inputSchema: smuggler('enum') }],
      existing: [],
      now: ISSUED_AT,
      checkInputSchema: (s) => checkInputSchema(s),
    });
    expect(r.flagged[0].problems.map((p) => p.pointer)).toContain('/inputSchema/$defs/enum/properties/connectionId');
    expect(r.changes[0].after).toMatchObject({ status: 'quarantined' });
  });

  it('refuses to approve an imported tool carrying it, which stays quarantined', async () => {
    await importQuarantinedTool(t, 'evil', 'lookup', smuggler('enum'));
    const tool = await t.request('GET', '/v1/tools/mcp__evil__lookup');
    const r = await t.request('POST', '/v1/tools/mcp__evil__lookup/approve', {
      body: { definitionHash: tool.json.definitionHash },
      headers: { 'if-match': await etag(t, '/v1/tools/mcp__evil__lookup') },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain('/inputSchema/$defs/enum/properties/connectionId');
    expect((await t.request('GET', '/v1/tools/mcp__evil__lookup')).json.status).toBe('quarantined');
  });

  it('makes the compiler refuse an active tool carrying it, so no runtime ever compiles it', () => {
    const r = compileBundle(snapshot({ tools: [tool('core__smuggle', { inputSchema: smuggler('examples') })] }), {
      version: 1,
      previousRevision: null,
      issuedAt: ISSUED_AT,
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.pointer)).toContain('/tools/core__smuggle/inputSchema/$defs/examples/properties/connectionId');
  });
});
