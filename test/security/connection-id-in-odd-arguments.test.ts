// R7.10 (no connectionId member anywhere in arguments) against the shapes a walk over arguments can
// get wrong: `__proto__` as an own key (JSON.parse makes one), nesting far deeper than a recursive
// walk could go, and cyclic objects an embedding program hands over instead of JSON text. Each gets
// an answer, never a hang or a thrown stack overflow.
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
  it(`finds a connectionId under ${DEPTH} arrays or objects, and allows the same nesting without it`, () => {
    const arrays = (inner: string) => `{"a":${'['.repeat(DEPTH)}${inner}${']'.repeat(DEPTH)}}`;
    const objects = (inner: string) => `{"a":${'{"b":'.repeat(DEPTH)}${inner}${'}'.repeat(DEPTH)}}`;
    expectRefused(call('core__open', arrays('{"connectionId":"conn-other"}')), [`/a${'/0'.repeat(DEPTH)}/connectionId`]);
    expectRefused(call('core__open', objects('{"connectionId":"conn-other"}')), [`/a${'/b'.repeat(DEPTH)}/connectionId`]);
    expect(call('core__open', arrays('{"connection":1}')).decision).toBe('allow');
    expect(call('core__open', objects('{"connection":1}')).decision).toBe('allow');
  });

  it('refuses arguments too deep for a recursive input schema to check, instead of throwing', () => {
    const deep = `{"head":${'{"next":'.repeat(DEPTH)}{}${'}'.repeat(DEPTH)}}`;
    const d = call('core__chain', deep);
    expect(d).toMatchObject({ decision: 'deny', errorCode: 'validation', errors: [{ pointer: '' }] });
    expect(d.message).toContain('could not be checked against the input schema of core__chain');
    // A shallow chain is checked as usual, both ways.
    expect(call('core__chain', '{"head":{"next":{"next":{}}}}').decision).toBe('allow');
    expectRefused(call('core__chain', '{"head":{"next":{"items":[{"connectionId":"conn-other"}]}}}'), ['/head/next/items/0/connectionId']);
  });
});

describe('cyclic arguments handed over by an embedding program', () => {
  it('finds a connectionId inside a cycle, once, without walking the cycle again', () => {
    const args: Record<string, any> = { q: 'x', more: { list: [] } };
    args.more.list.push(args, args.more);
    args.more.back = args;
    args.more.connectionId = 'conn-other';
    expectRefused(call('core__open', args), ['/more/connectionId']);
  });

  it('finds one at the end of a long cycle, and answers a clean cycle with the tool decision', () => {
    const head: Record<string, any> = { q: 'x' };
    let at = head;
    for (let i = 0; i < 5000; i++) at = at[`n${i}`] = {};
    at.loop = head;
    expect(call('core__open', head).decision).toBe('allow');
    at.connectionId = 'conn-other';
    const d = call('core__open', head);
    expect(d).toMatchObject({ decision: 'deny', errorCode: 'validation' });
    expect(d.errors?.[0]?.pointer).toMatch(/^\/n0\/n1\/.*\/n4999\/connectionId$/);
  });

  it('refuses a cycle a recursive input schema would follow forever, instead of throwing', () => {
    const link: Record<string, unknown> = {};
    link.next = link;
    const d = call('core__chain', { head: link });
    expect(d).toMatchObject({ decision: 'deny', errorCode: 'validation', errors: [{ pointer: '' }] });
  });
});
