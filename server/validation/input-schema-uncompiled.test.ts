import { describe, expect, it } from 'vitest';
import { compileInputSchema } from '../../runtime/load-bundle.ts';
import { randomInputSchema } from '../../test/support/random-input-schema.ts';
import { rng } from '../../test/support/seeded-random.ts';
import { checkInputSchema, judgedWithoutCompiling } from './input-schema.ts';

// The judge vouches for the schemas real MCP servers emit (combinators, conditionals,
// patternProperties, $defs with local $ref) without generating a validator for each: what it
// vouches for must compile in the runtime, and what does not compile is still refused.
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

// What the libraries write (their documented output), as the MCP SDKs hand it over.
const LIBRARY_SCHEMAS: Array<[string, Record<string, unknown>]> = [
  [
    'FastMCP optional parameters (anyOf with null)',
    {
      type: 'object',
      title: 'searchArguments',
      properties: {
        query: { type: 'string', title: 'Query' },
        limit: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null, title: 'Limit' },
        order: { anyOf: [{ enum: ['asc', 'desc'], type: 'string' }, { type: 'null' }], default: null, title: 'Order' },
      },
      required: ['query'],
    },
  ],
  [
    'Pydantic nested models and a discriminated union through $defs',
    {
      type: 'object',
      $defs: {
        Address: {
          type: 'object',
          properties: { street: { type: 'string' }, zip: { anyOf: [{ type: 'string', pattern: '^[0-9]{5}$' }, { type: 'null' }] } },
          required: ['street'],
        },
        Cat: { type: 'object', properties: { kind: { const: 'cat', type: 'string' } }, required: ['kind'] },
        Dog: { type: 'object', properties: { kind: { const: 'dog', type: 'string' } }, required: ['kind'] },
        Node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/Node' } } } },
      },
      properties: {
        home: { $ref: '#/$defs/Address' },
        work: { anyOf: [{ $ref: '#/$defs/Address' }, { type: 'null' }], default: null },
        pet: {
          oneOf: [{ $ref: '#/$defs/Cat' }, { $ref: '#/$defs/Dog' }],
          discriminator: { propertyName: 'kind', mapping: { cat: '#/$defs/Cat', dog: '#/$defs/Dog' } },
        },
        tree: { $ref: '#/$defs/Node' },
      },
      required: ['home', 'pet'],
    },
  ],
  [
    'zod-to-json-schema (draft-07, definitions, unions, closed objects)',
    {
      $schema: DRAFT_07,
      type: 'object',
      definitions: { tag: { type: 'string', minLength: 1 } },
      properties: {
        id: { type: 'string' },
        mode: { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'number' }] },
        tags: { type: 'array', items: { $ref: '#/definitions/tag' } },
        // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
        shape: { allOf: [{ type: 'object' }, { not: { required: ['x'] } }], if: { required: ['r'] }, then: { required: ['s'] } },
        meta: { type: 'object', patternProperties: { '^x-': { type: 'string' } }, additionalProperties: false },
      },
      required: ['id', 'mode'],
      additionalProperties: false,
    },
  ],
];

// Valid by the meta-schema and inside the dialect, yet the runtime's ajv throws on each.
const UNCOMPILABLE: Array<[string, Record<string, unknown>, string]> = [
  ['an empty enum inside anyOf', { type: 'object', properties: { a: { anyOf: [{ enum: [] }, { type: 'null' }] } } }, '/inputSchema'],
  [
    '$refs that only point at each other',
    { type: 'object', $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, properties: { x: { $ref: '#/$defs/a' } } },
    '/inputSchema',
  ],
  [
    'a $ref to itself inside oneOf',
    { type: 'object', $defs: { a: { $ref: '#/$defs/a' } }, properties: { x: { oneOf: [{ $ref: '#/$defs/a' }] } } },
    '/inputSchema',
  ],
  ['`nullable` without `type` under not', { type: 'object', properties: { a: { not: { nullable: true } } } }, '/inputSchema'],
  // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
  ['a draft-04 `id` under if', { type: 'object', if: { id: 'x', type: 'object' }, then: { required: ['a'] } }, '/inputSchema'],
];

describe('the schema judge without a compiler for each schema', () => {
  for (const [what, schema] of LIBRARY_SCHEMAS) {
    it(`vouches for ${what}, which the runtime compiles and validates`, () => {
      expect(judgedWithoutCompiling(schema)).toBe(true);
      expect(checkInputSchema(schema)).toEqual([]);
      expect(() => compileInputSchema(structuredClone(schema))).not.toThrow();
    });
  }

  for (const [what, schema, pointer] of UNCOMPILABLE) {
    it(`still refuses ${what}: it is compiled, and fails`, () => {
      expect(judgedWithoutCompiling(schema)).toBe(false);
      const problems = checkInputSchema(schema);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatchObject({ pointer, code: 'input_schema' });
      expect(problems[0].message).toMatch(/^does not compile: /);
    });
  }

  it('keeps the walk and meta-schema refusals, each with its pointer', () => {
    expect(checkInputSchema({ type: 'object', properties: { a: { anyOf: [{ $ref: '#/$defs/missing' }, { type: 'null' }] } } })).toEqual([
      expect.objectContaining({ pointer: '/inputSchema/properties/a/anyOf/0/$ref', code: 'input_schema' }),
    ]);
    expect(checkInputSchema({ type: 'object', properties: { a: { oneOf: [{ type: 'string', pattern: '(?=a)' }] } } })).toEqual([
      expect.objectContaining({ pointer: '/inputSchema/properties/a/oneOf/0/pattern', code: 'input_schema' }),
    ]);
    expect(checkInputSchema({ type: 'object', patternProperties: { '(a)\\1': {} } })).toEqual([
      expect.objectContaining({ pointer: '/inputSchema/patternProperties/(a)\\1', code: 'input_schema' }),
    ]);
    expect(checkInputSchema({ type: 'object', properties: { a: { anyOf: { type: 'string' } } } })[0]).toMatchObject({
      pointer: '/inputSchema/properties/a/anyOf',
      message: /is not valid JSON Schema/,
    });
    expect(checkInputSchema({ type: 'object', properties: { a: { if: { properties: { connectionId: { type: 'string' } } } } } })[0]).toMatchObject({
      pointer: '/inputSchema/properties/a/if/properties/connectionId',
      code: 'connection_id',
    });
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 200; i++) deep = { anyOf: [deep, { type: 'null' }] };
    expect(checkInputSchema({ type: 'object', properties: { a: deep } })).toEqual([expect.objectContaining({ pointer: '/inputSchema', code: 'too_deep' })]);
  });

  it('leaves to the compiler what it cannot follow: draft-07 with 2020 keywords, an escaped or remote-looking $ref, vendor keywords', () => {
    expect(judgedWithoutCompiling({ $schema: DRAFT_07, type: 'object', $defs: { a: { type: 'string' } } })).toBe(false);
    expect(judgedWithoutCompiling({ $schema: DRAFT_07, type: 'object', properties: { p: { type: 'array', items: [{ type: 'string' }] } } })).toBe(false);
    expect(judgedWithoutCompiling({ type: 'object', $defs: { 'a b': {} }, properties: { x: { $ref: '#/$defs/a%20b' } } })).toBe(false);
    expect(judgedWithoutCompiling({ type: 'object', properties: { x: { anyOf: [{ 'x-vendor': 1 }] } } })).toBe(false);
    expect(judgedWithoutCompiling({ $schema: 'https://example.com/meta', type: 'object' })).toBe(false);
  });

  it('passes only schemas the runtime compiles, among 500 random ones wrapped in combinators and references', () => {
    let vouched = 0;
    for (let seed = 1; seed <= 500; seed++) {
      const r = rng(seed);
      const base = randomInputSchema(r) as Record<string, unknown>;
      const props = (base.properties ?? {}) as Record<string, unknown>;
      const wrapped: Record<string, unknown> = {};
      const defs: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries(props)) {
        const how = r.pick(['anyOf', 'oneOf', 'allOf', 'not', 'if', 'ref', 'plain'] as const);
        if (how === 'ref') {
          defs[`D${Object.keys(defs).length}`] = sub;
          wrapped[name] = { $ref: `#/$defs/D${Object.keys(defs).length - 1}` };
        } else if (how === 'not') wrapped[name] = { not: sub };
        // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
        else if (how === 'if') wrapped[name] = { if: sub, then: { type: 'string' }, else: sub };
        else if (how === 'plain') wrapped[name] = sub;
        else wrapped[name] = { [how]: [sub, { type: 'null' }] };
      }
      const schema = { ...base, properties: wrapped, ...(Object.keys(defs).length ? { $defs: { ...((base.$defs as object) ?? {}), ...defs } } : {}) };
      if (checkInputSchema(schema, '').length > 0) continue;
      if (!judgedWithoutCompiling(schema)) continue;
      vouched++;
      expect(() => compileInputSchema(structuredClone(schema)), `seed ${seed}: ${JSON.stringify(schema)}`).not.toThrow();
    }
    expect(vouched).toBeGreaterThan(250);
  });
});
