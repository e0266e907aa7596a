// Attack: give a tool an input-schema pattern that backtracks catastrophically (^(a+)+$), so one
// decide() on a long argument blocks the runtime's event loop; or one the linear engine cannot run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createView, decide } from '../../runtime/decide.ts';
import { compileInputSchema, loadBundle } from '../../runtime/load-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { ajv } from '../../policy-schemas/index.ts';
import { linearRegExp, memoizedLinearRegExp } from '../../runtime/linear-regexp.ts';
import { ISSUED_AT, snapshot, tool } from '../engine/build.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { etag, importQuarantinedTool } from './support.ts';

const withPattern = (pattern: string) => ({ type: 'object', properties: { q: { type: 'string', pattern } }, required: ['q'] });
const BACKTRACKING_ONLY = ['(?=a)a', '(a)\\1', '(?<!x)a', 'a(?!b)'];

describe('the runtime matches patterns in linear time', () => {
  it('answers decide() on ^(a+)+$ with a 10,000-character argument, either way', () => {
    const r = compileBundle(
      snapshot({
        tools: [tool('core__evil', { inputSchema: withPattern('^(a+)+$') })],
        policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
      }),
      { version: 1, previousRevision: null, issuedAt: ISSUED_AT },
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const view = createView(loadBundle(JSON.parse(r.text)), { subject: 'agent:a', groups: ['*'] });
    expect(decide(view, { name: 'core__evil', arguments: JSON.stringify({ q: 'a'.repeat(10_000) }) }).decision).toBe('allow');
    const bad = decide(view, { name: 'core__evil', arguments: JSON.stringify({ q: `${'a'.repeat(9_999)}!` }) });
    expect(bad).toMatchObject({ decision: 'deny', errorCode: 'validation' });
  });

  it('runs patterns with RE2 semantics: syntax that needs backtracking does not compile in the runtime', () => {
    for (const p of BACKTRACKING_ONLY) expect(() => compileInputSchema(withPattern(p)), p).toThrow();
  });

  it("validates the server's own request bodies with the same engine (remembering answers for short strings)", () => {
    const engine = ajv.opts.code.regExp;
    expect(engine).toBe(memoizedLinearRegExp);
    for (const p of BACKTRACKING_ONLY) expect(() => engine(p, 'u'), p).toThrow();
    const evil = engine('^(a+)+$', 'u');
    expect(evil.test(`${'a'.repeat(10_000)}!`)).toBe(false);
    expect(evil.test('a'.repeat(10_000))).toBe(true);
    // Remembered answers are the engine's answers, asked again.
    for (const s of ['aaa', 'aa!', 'aaa']) expect(evil.test(s)).toBe(linearRegExp('^(a+)+$', 'u').test(s));
  });
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('a pattern the linear engine cannot run is refused with its pointer', () => {
  for (const p of BACKTRACKING_ONLY) {
    it(`refuses ${p} when a tool is saved`, async () => {
      const r = await t.request('POST', '/v1/tools', {
        body: { id: `core__re${BACKTRACKING_ONLY.indexOf(p)}`, description: 'd', effect: 'read_only', inputSchema: withPattern(p) },
      });
      expect(r.status).toBe(400);
      expect(r.json.errors).toContainEqual(expect.objectContaining({ pointer: '/inputSchema/properties/q/pattern' }));
    });
  }

  it('refuses one nested in $defs or propertyNames too', async () => {
    const schema = {
      type: 'object',
      propertyNames: { pattern: '^(?!x)' },
      $defs: { d: { type: 'string', pattern: '(a)\\1' } },
      properties: { q: { $ref: '#/$defs/d' } },
    };
    const r = await t.request('POST', '/v1/tools', { body: { id: 'core__nested_re', description: 'd', effect: 'read_only', inputSchema: schema } });
    expect(r.status).toBe(400);
    const pointers = r.json.errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/inputSchema/propertyNames/pattern', '/inputSchema/$defs/d/pattern']));
  });

  it('refuses to approve an imported tool carrying one', async () => {
    await importQuarantinedTool(t, 'regex', 'lookahead', withPattern('^(?=.*secret)'));
    const tool = await t.request('GET', '/v1/tools/mcp__regex__lookahead');
    const r = await t.request('POST', '/v1/tools/mcp__regex__lookahead/approve', {
      body: { definitionHash: tool.json.definitionHash },
      headers: { 'if-match': await etag(t, '/v1/tools/mcp__regex__lookahead') },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toContainEqual(expect.objectContaining({ pointer: '/inputSchema/properties/q/pattern' }));
  });

  it('makes the compiler name it rather than ship it', () => {
    const r = compileBundle(snapshot({ tools: [tool('core__look', { inputSchema: withPattern('a(?!b)') })] }), {
      version: 1,
      previousRevision: null,
      issuedAt: ISSUED_AT,
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.pointer)).toContain('/tools/core__look/inputSchema/properties/q/pattern');
  });
});
