import { describe, expect, it } from 'vitest';
import { compileInputSchema } from '../../runtime/load-bundle.ts';
import { checkInputSchema, judgeSchema } from './input-schema.ts';

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

describe('the schema dialect: the 2020-12 vocabulary real MCP servers emit is accepted', () => {
  const accepted: Array<[string, Record<string, unknown>]> = [
    ['anyOf with null', obj({ n: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null } })],
    ['oneOf', obj({ v: { oneOf: [{ type: 'string' }, { type: 'number' }] } })],
    ['allOf', obj({ v: { allOf: [{ type: 'string' }, { minLength: 1 }] } })],
    ['not', obj({ v: { not: { const: 'x' } } })],
    // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
    ['if/then/else', obj({ kind: { type: 'string' } }, { if: { properties: { kind: { const: 'a' } } }, then: { required: ['a'] }, else: { required: ['b'] } })],
    ['patternProperties with an RE2 name', obj({}, { patternProperties: { '^x-[a-z]+$': { type: 'string' } } })],
    ['$defs with a local $ref', obj({ p: { $ref: '#/$defs/P' } }, { $defs: { P: { type: 'object', properties: { q: { type: 'string' } } } } })],
    [
      'a recursive $ref',
      obj(
        { tree: { $ref: '#/$defs/Node' } },
        { $defs: { Node: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/Node' } } } } } },
      ),
    ],
    [
      'draft-07 definitions',
      {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { p: { $ref: '#/definitions/P' } },
        definitions: { P: { type: 'string' } },
      },
    ],
    ['a root $id', { $id: 'https://example.com/tool.json', ...obj({ a: { type: 'string' } }) }],
    [
      'a discriminator annotation',
      obj({ pet: { oneOf: [{ $ref: '#/$defs/Cat' }], discriminator: { propertyName: 'kind' } } }, { $defs: { Cat: { type: 'object' } } }),
    ],
  ];
  for (const [what, schema] of accepted) {
    it(`accepts ${what}, and the runtime compiles it`, () => {
      expect(checkInputSchema(schema)).toEqual([]);
      expect(() => compileInputSchema(schema)).not.toThrow();
    });
  }
});

describe('the schema dialect: what stays refused, each with its pointer', () => {
  const refused: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['a remote $ref', obj({ a: { $ref: 'https://example.com/s.json' } }), '/inputSchema/properties/a/$ref', /only local references/],
    ['a $ref to an anchor', obj({ a: { $ref: '#thing' } }), '/inputSchema/properties/a/$ref', /JSON pointer/],
    ['$dynamicRef', obj({ a: { $dynamicRef: '#x' } }), '/inputSchema/properties/a/$dynamicRef', /not allowed/],
    ['$recursiveRef', obj({ a: { $recursiveRef: '#' } }), '/inputSchema/properties/a/$recursiveRef', /not allowed/],
    ['a nested $id', obj({ a: { $id: 'https://example.com/a', type: 'string' } }), '/inputSchema/properties/a/$id', /only at the root/],
    ['an $anchor', obj({ a: { $anchor: 'here', type: 'string' } }), '/inputSchema/properties/a/$anchor', /anchors are not allowed/],
    ['a draft-07 anchor spelled as an $id fragment', { $id: '#root', ...obj({}) }, '/inputSchema/$id', /fragment/],
    [
      'a lookahead in a pattern inside anyOf',
      obj({ a: { anyOf: [{ type: 'string', pattern: '(?=x)' }] } }),
      '/inputSchema/properties/a/anyOf/0/pattern',
      /linear time/,
    ],
    ['a backreference as a patternProperties name', obj({}, { patternProperties: { '(a)\\1': {} } }), '/inputSchema/patternProperties/(a)\\1', /linear time/],
    [
      'connectionId inside oneOf',
      obj({ a: { oneOf: [{ type: 'object', properties: { connectionId: { type: 'string' } } }] } }),
      '/inputSchema/properties/a/oneOf/0/properties/connectionId',
      /out of band/,
    ],
    [
      'connectionId inside $defs',
      obj({}, { $defs: { D: { properties: { connectionId: {} } } } }),
      '/inputSchema/$defs/D/properties/connectionId',
      /out of band/,
    ],
  ];
  for (const [what, schema, pointer, message] of refused) {
    it(`refuses ${what}`, () => {
      const problems = checkInputSchema(schema);
      expect(problems.map((p) => p.pointer)).toContain(pointer);
      expect(problems.find((p) => p.pointer === pointer)?.message).toMatch(message);
      // A hand-signed bundle cannot bring it in either: the runtime will not compile it (connectionId
      // properties aside, which R7.10 answers at call time).
      if (!/out of band/.test(message.source)) expect(() => compileInputSchema(schema)).toThrow();
    });
  }

  it('refuses a schema nesting deeper than 64 levels (R7.11), whatever the stack could take', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { a: deep } };
    const problems = checkInputSchema(deep);
    expect(problems).toEqual([expect.objectContaining({ pointer: '/inputSchema', code: 'too_deep' })]);
    // 31 levels of properties are 63 nested objects: inside the limit.
    let fits: Record<string, unknown> = {};
    for (let i = 0; i < 31; i++) fits = { type: 'object', properties: { a: fits } };
    expect(checkInputSchema(fits)).toEqual([]);
  });
});

describe('judgeSchema for other roles', () => {
  it('judges an output or arguments schema without the input schema rules', () => {
    const schema = { type: 'array', items: { type: 'object', properties: { connectionId: { type: 'string' } } } };
    expect(judgeSchema(schema, '/outputSchema', 'output')).toEqual([]);
    expect(judgeSchema(schema, '', 'arguments')).toEqual([]);
    expect(checkInputSchema(schema).map((p) => p.pointer)).toEqual(['/inputSchema/type', '/inputSchema/items/properties/connectionId']);
  });

  it('holds an arguments schema to the same dialect, pointers under the caller’s prefix', () => {
    const problems = judgeSchema({ properties: { to: { pattern: '(?<=a)b' } } }, '/roles/r/constraints/0/arguments', 'arguments');
    expect(problems.map((p) => p.pointer)).toEqual(['/roles/r/constraints/0/arguments/properties/to/pattern']);
  });

  it('refuses what is not a schema object', () => {
    expect(judgeSchema([], '/x', 'arguments')).toEqual([expect.objectContaining({ pointer: '/x', message: 'must be a JSON Schema object' })]);
  });
});
