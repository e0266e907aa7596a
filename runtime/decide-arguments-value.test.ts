// Arguments handed over as a value rather than JSON text (docs/spec.md R14.6, R7.5): an SDK caller
// passes an object, and the upstream gets that object's JSON text. Only a JSON value is judged;
// anything JSON.stringify would turn into null, drop or refuse is invalid_json, never checked
// against the schema as one thing and sent as another.
import { describe, expect, it } from 'vitest';
import { build, tool } from '../test/engine/build.ts';
import { createView, decide } from './decide.ts';
import { readArgumentsValue } from './json-arguments.ts';

const loaded = build({
  tools: [
    tool('core__numbers', { inputSchema: { type: 'object', properties: { n: { type: 'number' }, list: { type: 'array' } } } }),
    tool('core__open', { inputSchema: { type: 'object' } }),
    tool('core__hidden', { inputSchema: { type: 'object' } }),
  ],
  policy: { roles: { r: { groups: ['*'], allow: ['core__numbers', 'core__open'] } }, bindings: { 'agent:a': ['r'] } },
});
const view = createView(loaded, { subject: 'agent:a', groups: ['*'] });
// The value is what an embedding program may hand over, whatever the declared type says.
const call = (name: string, args: unknown) => decide(view, { toolCallId: 'c1', name, arguments: args as Record<string, unknown> });

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

const cyclic: Record<string, unknown> = { q: 'x' };
cyclic.self = cyclic;
const cyclicThroughArray: Record<string, unknown> = { q: 'x', list: [] };
(cyclicThroughArray.list as unknown[]).push({ back: cyclicThroughArray });

describe('R14.6: arguments handed over as a value must be a JSON value', () => {
  it.each<[string, unknown]>([
    ['Infinity', { n: Number.POSITIVE_INFINITY }],
    ['-Infinity', { n: Number.NEGATIVE_INFINITY }],
    ['NaN', { n: Number.NaN }],
    ['NaN inside an array', { list: [1, Number.NaN] }],
    ['NaN nested deeper', { list: [{ a: { b: [Number.NaN] } }] }],
    ['undefined inside an array', { list: [1, undefined] }],
    ['a hole in an array', { list: Object.assign([1], { 2: 3 }) }],
    ['a member set to undefined', { n: 1, extra: undefined }],
    ['a function', { n: 1, f: () => 1 }],
    ['a function inside an array', { list: [() => 1] }],
    ['a BigInt', { n: 10n }],
    ['a BigInt inside an array', { list: [1n] }],
    ['a symbol', { list: [Symbol('s')] }],
    ['a Date', { list: [new Date(0)] }],
    ['a Map', { list: [new Map([['a', 1]])] }],
    ['a class instance', { list: [new Point(1, 2)] }],
    ['a class instance as the arguments', new Point(1, 2)],
    ['an object that contains itself', cyclic],
    ['an object that comes back through an array', cyclicThroughArray],
    ['a string with a lone surrogate', { list: ['a\uD800b'] }],
    ['a member name with a lone surrogate', { list: [{ '\uDC00': 1 }] }],
  ])('%s is invalid_json, the schema never asked', (_what, args) => {
    const d = call('core__numbers', args);
    expect(d).toMatchObject({ decision: 'deny', errorCode: 'invalid_json' });
    expect(d.errors).toBeUndefined();
    expect(d.message).toMatch(/not (?:a JSON value|I-JSON)|no JSON text can/);
  });

  it('names what is wrong without repeating the value', () => {
    expect(call('core__numbers', { n: Number.POSITIVE_INFINITY }).message).toContain('not finite');
    expect(call('core__numbers', { list: [1, undefined] }).message).toContain('undefined');
    expect(call('core__numbers', { n: 12345678901234567890n }).message).not.toContain('12345678901234567890');
    expect(call('core__numbers', cyclic).message).toContain('cycle');
  });

  it('takes every JSON value: finite numbers, -0, strings with surrogate pairs, null, null-prototype objects, shared objects', () => {
    const shared = { a: 1 };
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { k: [shared, shared] });
    for (const args of [
      {},
      { n: -0 },
      { n: Number.MAX_VALUE, list: [Number.MIN_VALUE, -1.5e300, 0] },
      { list: ['\uD83D\uDE00', '', null, true, false, [], {}] },
      { list: [shared, { again: shared }], n: 2 },
      bare,
    ]) {
      expect(call('core__numbers', args).decision).toBe('allow');
    }
  });

  it('judges a value shared 2^60 ways in one pass, and the walk is not fooled into calling it a cycle', () => {
    let node: Record<string, unknown> = { leaf: [1, 'x'] };
    for (let i = 0; i < 60; i++) node = { a: node, b: [node] };
    expect(readArgumentsValue({ tree: node })).toMatchObject({ ok: false, code: 'too_deep' });
    let shallow: Record<string, unknown> = { leaf: [1, 'x'] };
    for (let i = 0; i < 30; i++) shallow = { a: shallow, b: [shallow] };
    expect(call('core__open', { tree: shallow }).decision).toBe('allow');
  });

  it('reads a large value as a small one: 150,000 items pass, one NaN among them does not', () => {
    const items = Array.from({ length: 150_000 }, (_, i) => (i % 2 ? { i } : i));
    expect(call('core__numbers', { list: items }).decision).toBe('allow');
    items.push(Number.NaN);
    expect(call('core__numbers', { list: items }).errorCode).toBe('invalid_json');
  });

  it('nests as text does: 64 levels pass, 65 answer validation at ""; a non-JSON value deep inside is invalid_json first', () => {
    const nest = (levels: number, inner: unknown) => {
      let v: unknown = inner;
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    expect(call('core__open', { d: nest(62, []) }).decision).toBe('allow');
    expect(call('core__open', { d: nest(63, []) })).toMatchObject({ errorCode: 'validation', errors: [{ pointer: '' }] });
    expect(call('core__open', { d: nest(100_000, []) })).toMatchObject({ errorCode: 'validation', errors: [{ pointer: '' }] });
    // As for text (R7.5 before R14.3): not JSON at all answers before too deep.
    expect(call('core__open', { d: nest(100_000, [Number.NaN]) }).errorCode).toBe('invalid_json');
    // A cycle a thousand levels down is a cycle, not merely too deep.
    const deepCycle: unknown[] = [];
    let outer: unknown[] = deepCycle;
    for (let i = 0; i < 1_000; i++) outer = [outer];
    deepCycle.push(outer);
    expect(call('core__open', { d: outer }).errorCode).toBe('invalid_json');
  });

  it('keeps the order of R7.8: an unknown or hidden tool answers before the arguments are read', () => {
    expect(call('core__missing', { n: Number.NaN }).errorCode).toBe('unavailable');
    expect(call('core__hidden', { n: Number.NaN }).errorCode).toBe('policy_denied');
  });

  it('reads the same arguments as text the same way', () => {
    // Text cannot spell NaN, Infinity or undefined at all: it is invalid JSON.
    expect(call('core__numbers', '{"n":NaN}').errorCode).toBe('invalid_json');
    expect(call('core__numbers', '{"n":1e400}').errorCode).toBe('invalid_json');
    expect(call('core__numbers', '{"list":["\\ud800"]}').errorCode).toBe('invalid_json');
    expect(call('core__numbers', '{"n":1,"list":[null]}').decision).toBe('allow');
    expect(call('core__numbers', { n: 1, list: [null] }).decision).toBe('allow');
  });
});
