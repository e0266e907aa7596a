// How decide reads arguments (docs/spec.md R7.5, R7.10, R14.3, R14.5–R14.8): I-JSON text, a stated
// nesting limit, member names as data, formats and multipleOf as the spec words them.
import { describe, expect, it } from 'vitest';
import { build, tool } from '../test/engine/build.ts';
import { createView, decide } from './decide.ts';

const SCHEMAS: Record<string, Record<string, unknown>> = {
  core__builtins: {
    type: 'object',
    properties: { toString: { type: 'string' }, valueOf: { type: 'string' }, hasOwnProperty: { type: 'string' } },
  },
  core__needs_tostring: { type: 'object', required: ['toString', 'constructor'] },
  core__numbers: {
    type: 'object',
    properties: { i: { type: 'integer' }, n: { type: 'number' }, m: { type: 'number', multipleOf: 0.1 }, b: { type: 'number', multipleOf: 1e-21 } },
  },
  core__formats: {
    type: 'object',
    properties: Object.fromEntries(
      ['date-time', 'date', 'time', 'email', 'hostname', 'ipv4', 'ipv6', 'uri', 'uuid', 'regex', 'int32', 'password'].map((f) => [
        f,
        { type: 'string', format: f },
      ]),
    ),
  },
  core__open: { type: 'object' },
};
const loaded = build({
  tools: Object.entries(SCHEMAS).map(([id, inputSchema]) => tool(id, { inputSchema })),
  policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
});
const view = createView(loaded, { subject: 'agent:a', groups: ['*'] });
const call = (name: string, args: string | Record<string, unknown>) => decide(view, { toolCallId: 'c1', name, arguments: args });
const pointers = (d: ReturnType<typeof call>) => (d.errors ?? []).map((e) => e.pointer);

describe('R1.1 / R14.7: member names are data', () => {
  it('a property named toString, valueOf or hasOwnProperty is read as an own member only', () => {
    expect(call('core__builtins', '{}').decision).toBe('allow');
    expect(call('core__builtins', {}).decision).toBe('allow');
    expect(call('core__builtins', '{"toString":"a","valueOf":"b","hasOwnProperty":"c"}').decision).toBe('allow');
    expect(pointers(call('core__builtins', '{"toString":5}'))).toEqual(['/toString']);
  });

  it('`required` names own members: inherited built-ins do not count', () => {
    expect(pointers(call('core__needs_tostring', '{}')).sort()).toEqual(['/constructor', '/toString']);
    expect(call('core__needs_tostring', '{"toString":1,"constructor":2}').decision).toBe('allow');
  });
});

describe('R14.6: arguments are I-JSON', () => {
  it('integer literals within ±(2^53 − 1) pass; one beyond is invalid_json, before JSON.parse rounds it', () => {
    expect(call('core__numbers', '{"i":9007199254740991}').decision).toBe('allow');
    expect(call('core__numbers', '{"i":-9007199254740991}').decision).toBe('allow');
    expect(call('core__numbers', '{"i":9007199254740992}').errorCode).toBe('invalid_json');
    expect(call('core__numbers', '{"i":9007199254740993}').errorCode).toBe('invalid_json');
    expect(call('core__numbers', '{"n":[1,{"x":-12345678901234567890}]}').errorCode).toBe('invalid_json');
    // A member name or a string that looks like a big number is text.
    expect(call('core__numbers', '{"12345678901234567890":"12345678901234567890"}').decision).toBe('allow');
  });

  it('a number that overflows a double is invalid_json, not an integer', () => {
    expect(call('core__numbers', '{"i":1e400}').errorCode).toBe('invalid_json');
    expect(call('core__numbers', '{"n":-1E+400}').errorCode).toBe('invalid_json');
    // Written with an exponent, a large double is a number, and an integer when it has no fraction.
    expect(call('core__numbers', '{"i":1e20,"n":1.5e300}').decision).toBe('allow');
    expect(call('core__numbers', '{"i":1.0}').decision).toBe('allow');
    expect(pointers(call('core__numbers', '{"i":1.5}'))).toEqual(['/i']);
  });

  it('a member name twice in one object is invalid_json, in the same object only', () => {
    expect(call('core__open', '{"a":1,"a":2}').errorCode).toBe('invalid_json');
    expect(call('core__open', '{"x":{"a":1,"\\u0061":2}}').errorCode).toBe('invalid_json');
    expect(call('core__open', '{"a":{"a":1},"b":[{"a":1},{"a":2}]}').decision).toBe('allow');
  });

  it('a lone surrogate is invalid_json; a pair is a character', () => {
    expect(call('core__open', '{"a":"\\ud800"}').errorCode).toBe('invalid_json');
    expect(call('core__open', '{"\\udc00":1}').errorCode).toBe('invalid_json');
    expect(call('core__open', '{"a":"\\ud83d\\ude00"}').decision).toBe('allow');
  });

  it('multipleOf: x / m as a double must be an integer, also past 10^21', () => {
    expect(call('core__numbers', '{"m":0.5}').decision).toBe('allow');
    // 0.3 / 0.1 is 2.9999999999999996 in doubles.
    expect(pointers(call('core__numbers', '{"m":0.3}'))).toEqual(['/m']);
    expect(call('core__numbers', '{"b":1}').decision).toBe('allow');
  });
});

describe('R14.3: nesting limit', () => {
  it('64 levels pass, 65 answer validation at "" whatever the schema', () => {
    const nest = (arrays: number) => `${'['.repeat(arrays)}${']'.repeat(arrays)}`;
    // The arguments object and 63 arrays: 64 levels.
    expect(call('core__open', `{"a":${nest(63)}}`).decision).toBe('allow');
    expect(call('core__open', `{"a":${nest(64)}}`)).toMatchObject({ decision: 'deny', errorCode: 'validation', errors: [{ pointer: '' }] });
  });
});

describe('R7.10: connectionId members in document order', () => {
  it('reports them in the order the text writes them, not JavaScript key order', () => {
    const d = call('core__open', '{"b":{"connectionId":"x"},"1":{"connectionId":"y"},"a":[{"connectionId":"z"}]}');
    // JavaScript would list "1" first; its pointer stops at its object (not a field-like name).
    expect(pointers(d)).toEqual(['/b/connectionId', '', '/a/0/connectionId']);
  });

  it('reports one inside another’s value too', () => {
    expect(pointers(call('core__open', '{"connectionId":{"connectionId":1}}'))).toEqual(['/connectionId', '/connectionId/connectionId']);
  });
});

describe('R14.5: asserted formats and annotations', () => {
  const ok = (format: string, value: string) => call('core__formats', { [format]: value }).decision === 'allow';
  it.each([
    ['date-time', '2026-02-28T23:59:59.5+01:00', true],
    ['date-time', '2026-02-28t23:59:59z', true],
    ['date-time', '2026-02-28 23:59:59Z', false],
    ['date-time', '2026-02-29T00:00:00Z', false],
    ['date-time', '2024-02-29T00:00:00Z', true],
    ['date-time', '2026-01-01T23:59:60Z', false],
    ['date-time', '2026-01-01T10:00:00', false],
    ['date', '2026-13-01', false],
    ['time', '10:00:00-08:00', true],
    ['email', 'ada@example.com', true],
    ['email', 'ada@@example.com', false],
    ['hostname', 'a-b.example', true],
    ['hostname', '-a.example', false],
    ['ipv4', '192.168.0.1', true],
    ['ipv4', '192.168.00.1', false],
    ['ipv6', '::ffff:192.168.0.1', true],
    ['ipv6', '1::2::3', false],
    ['uri', 'https://example.com/a?b=c#d', true],
    ['uri', '/relative/path', false],
    ['uuid', '123e4567-e89b-12d3-a456-426614174000', true],
    ['uuid', 'urn:uuid:123e4567-e89b-12d3-a456-426614174000', false],
    ['regex', '(?i)a', true],
    ['regex', '\\Aa\\z', true],
    ['regex', '(?=a)', false],
    ['int32', 'not a number', true],
    ['password', '', true],
  ])('%s %j → %s', (format, value, expected) => {
    expect(ok(format, value)).toBe(expected);
  });
});

describe('R14.8: where each keyword points', () => {
  const pointed = build({
    tools: [
      tool('core__kw', {
        inputSchema: {
          type: 'object',
          properties: {
            dep: { type: 'object', dependentRequired: { a: ['b'] } },
            closed: { type: 'object', properties: { x: {} }, unevaluatedProperties: false },
            list: { type: 'array', prefixItems: [{ type: 'string' }], items: false, contains: { const: 'k' } },
            names: { type: 'object', propertyNames: { pattern: '^[a-z]+$' } },
          },
        },
      }),
    ],
    policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
  });
  const kwView = createView(pointed, { subject: 'agent:a', groups: ['*'] });
  const at = (args: unknown) => (decide(kwView, { name: 'core__kw', arguments: JSON.stringify(args) }).errors ?? []).map((e) => e.pointer);

  it('dependentRequired: the missing property', () => expect(at({ dep: { a: 1 } })).toEqual(['/dep/b']));
  it('unevaluatedProperties: the member, named when it looks like a field', () => {
    expect(at({ closed: { x: 1, y: 2 } })).toEqual(['/closed/y']);
    expect(at({ closed: { x: 1, 'not a field': 2 } })).toEqual(['/closed']);
  });
  it('items: false and contains: the array', () => {
    expect(at({ list: ['k', 'extra'] })).toEqual(['/list']);
    // What the `contains` subschema reports of each element is not normative; the array is.
    expect(at({ list: ['a'] })).toContain('/list');
  });
  it('propertyNames: the object, never the name', () => expect(at({ names: { Bad: 1 } })).toContain('/names'));
});

describe('R14.6: uniqueItems compares every item as a JSON value', () => {
  const loadedU = build({
    tools: [tool('core__u', { inputSchema: { type: 'object', properties: { c: { type: 'array', items: { type: 'string' }, uniqueItems: true } } } })],
    policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
  });
  const viewU = createView(loadedU, { subject: 'agent:a', groups: ['*'] });
  const at = (text: string) => (decide(viewU, { name: 'core__u', arguments: text }).errors ?? []).map((e) => e.pointer);

  it('finds equal items of a type `items` does not name (found by the Python reference)', () => {
    expect(at('{"c":["x",[],[]]}')).toContain('/c');
    expect(at('{"c":["x",{"a":1,"b":2},{"b":2,"a":1}]}')).toContain('/c');
    expect(at('{"c":["x",1,1.0]}')).toContain('/c');
    expect(at('{"c":["x","y"]}')).toEqual([]);
  });
});

describe('keywords after a tuple are checked on arrays shorter than the tuple (found by the Python reference)', () => {
  const loadedT = build({
    tools: [
      tool('core__t2020', {
        inputSchema: {
          type: 'object',
          properties: {
            a: { not: { prefixItems: [{ const: null }], contains: { const: 1 } } },
            // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
            b: { if: { prefixItems: [{}], minContains: 1, contains: { const: 1 } }, then: { const: 'never' } },
          },
        },
      }),
      tool('core__t07', {
        inputSchema: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { a: { not: { items: [{ const: null }], contains: { const: 1 } } } },
        },
      }),
    ],
    policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
  });
  const viewT = createView(loadedT, { subject: 'agent:a', groups: ['*'] });
  const decision = (name: string, text: string) => decide(viewT, { name, arguments: text }).decision;

  it('`not` of a tuple whose `contains` fails on [] holds', () => {
    expect(decision('core__t2020', '{"a":[]}')).toBe('allow');
    expect(decision('core__t2020', '{"a":[null,1]}')).toBe('deny');
    expect(decision('core__t07', '{"a":[]}')).toBe('allow');
    expect(decision('core__t07', '{"a":[null,1]}')).toBe('deny');
  });

  it('`if` of a tuple whose `contains` fails on [] takes no `then`', () => {
    expect(decision('core__t2020', '{"b":[]}')).toBe('allow');
    expect(decision('core__t2020', '{"b":[1]}')).toBe('deny');
  });
});
