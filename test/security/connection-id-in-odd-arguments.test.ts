// R7.10 (no connectionId member anywhere in arguments) against the shapes a walk over arguments can
// get wrong: `__proto__` as an own key (JSON.parse makes one), nesting far deeper than a recursive
// walk could go, and shared or cyclic objects an embedding program hands over instead of JSON text.
// Each gets an answer, never a hang or a thrown stack overflow: past R14.3's nesting limit the answer
// is validation at "" before any walk; a cycle is no JSON value, invalid_json (R14.6).
import { describe, expect, it } from 'vitest';
import type { Bundle, Tool } from '../../policy-schemas/types.gen.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { ISSUED_AT, snapshot, tool } from '../engine/build.ts';

const SCHEMAS: Record<string, Record<string, unknown>> = {
  core__open: { type: 'object', properties: { q: { type: 'string' } } },
  // A linked structure: the validator follows `next` as deep as the arguments go.
  core__chain: {
    type: 'object',
    $defs: { link: { type: 'object', properties: { next: { $ref: '#/$defs/link' }, items: { type: 'array', items: { $ref: '#/$defs/link' } } } } },
    properties: { head: { $ref: '#/$defs/link' } },
  },
};
const tools: Tool[] = Object.entries(SCHEMAS).map(([id, inputSchema]) => tool(id, { inputSchema }));
const compiled = compileBundle(snapshot({ tools, policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } } }), {
  version: 1,
  previousRevision: null,
  issuedAt: ISSUED_AT,
});
if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
const view = createView(loadBundle(JSON.parse(compiled.text) as Bundle), { subject: 'agent:a', groups: ['*'] });
const call = (name: string, args: string | Record<string, unknown>) => decide(view, { toolCallId: 'c1', name, arguments: args });

/** A decision refusing the member(s) at `pointers`, never repeating the connection's value. */
function expectRefused(d: ReturnType<typeof call>, pointers: string[]) {
  expect(d).toMatchObject({ toolCallId: 'c1', decision: 'deny', errorCode: 'validation' });
  expect(d.errors?.map((e) => e.pointer)).toEqual(pointers);
  expect(JSON.stringify(d)).not.toContain('conn-other');
}

const DEPTH = 20_000;

describe('__proto__ as an own key of the arguments', () => {
  it('is walked like any other member: a connectionId under it is refused, named by its pointer', () => {
    expectRefused(call('core__open', '{"__proto__":{"connectionId":"conn-other"}}'), ['/__proto__/connectionId']);
    expectRefused(call('core__open', '{"q":"x","__proto__":[{"a":1},{"connectionId":"conn-other"}]}'), ['/__proto__/1/connectionId']);
    expectRefused(call('core__open', '{"a":{"__proto__":{"__proto__":{"connectionId":"conn-other"}}}}'), ['/a/__proto__/__proto__/connectionId']);
  });

  it('is walked in arguments handed over already parsed (JSON.parse makes __proto__ an own key)', () => {
    const args = JSON.parse('{"a":{"__proto__":{"connectionId":"conn-other"}}}') as Record<string, unknown>;
    expect(Object.hasOwn(args.a as object, '__proto__')).toBe(true);
    expectRefused(call('core__open', args), ['/a/__proto__/connectionId']);
  });

  it('without a connectionId under it, changes nothing', () => {
    expect(call('core__open', '{"q":"x","__proto__":{"connection":"c"}}').decision).toBe('allow');
  });
});

describe('arguments nested deeper than any call stack', () => {
  it(`answers ${DEPTH} nested arrays or objects with validation at "", connectionId or not (R14.3)`, () => {
    const arrays = (inner: string) => `{"a":${'['.repeat(DEPTH)}${inner}${']'.repeat(DEPTH)}}`;
    const objects = (inner: string) => `{"a":${'{"b":'.repeat(DEPTH)}${inner}${'}'.repeat(DEPTH)}}`;
    for (const text of [
      arrays('{"connectionId":"conn-other"}'),
      objects('{"connectionId":"conn-other"}'),
      arrays('{"connection":1}'),
      objects('{"connection":1}'),
    ]) {
      expectRefused(call('core__open', text), ['']);
    }
  });

  it('finds a connectionId at the deepest level the limit allows', () => {
    // The arguments object, 62 arrays, and the object holding the member: 64 levels.
    expectRefused(call('core__open', `{"a":${'['.repeat(62)}{"connectionId":"conn-other"}${']'.repeat(62)}}`), [`/a${'/0'.repeat(62)}/connectionId`]);
  });

  it('refuses arguments too deep for a recursive input schema to check, instead of throwing', () => {
    const deep = `{"head":${'{"next":'.repeat(DEPTH)}{}${'}'.repeat(DEPTH)}}`;
    const d = call('core__chain', deep);
    expect(d).toMatchObject({ decision: 'deny', errorCode: 'validation', errors: [{ pointer: '' }] });
    expect(d.message).toContain('nest deeper than 64 levels');
    // A shallow chain is checked as usual, both ways.
    expect(call('core__chain', '{"head":{"next":{"next":{}}}}').decision).toBe('allow');
    expectRefused(call('core__chain', '{"head":{"next":{"items":[{"connectionId":"conn-other"}]}}}'), ['/head/next/items/0/connectionId']);
  });
});

describe('shared and cyclic arguments handed over by an embedding program', () => {
  it('answers a cycle invalid_json (no JSON text makes one, R14.6), with or without a connectionId in it', () => {
    const args: Record<string, any> = { q: 'x', more: { list: [] } };
    args.more.list.push(args, args.more);
    args.more.back = args;
    expect(call('core__open', args)).toMatchObject({ toolCallId: 'c1', decision: 'deny', errorCode: 'invalid_json' });
    args.more.connectionId = 'conn-other';
    const d = call('core__open', args);
    expect(d).toMatchObject({ toolCallId: 'c1', decision: 'deny', errorCode: 'invalid_json' });
    expect(JSON.stringify(d)).not.toContain('conn-other');
  });

  it('walks an object shared 2^60 ways once per depth, and finds a connectionId in it', () => {
    let node: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 60; i++) node = { a: node, b: node };
    const args = { q: 'x', tree: node };
    expect(call('core__open', args).decision).toBe('allow');
  });

  it('refuses a cycle a recursive input schema would follow forever, instead of throwing', () => {
    const link: Record<string, unknown> = {};
    link.next = link;
    const d = call('core__chain', { head: link });
    expect(d).toMatchObject({ decision: 'deny', errorCode: 'invalid_json' });
  });
});
