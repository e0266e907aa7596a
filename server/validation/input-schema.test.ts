import { describe, expect, it } from 'vitest';
import { readsAsDraft2020 } from '../../runtime/json-schema-meta.ts';
import { compileInputSchema } from '../../runtime/load-bundle.ts';
import { randomInputSchema } from '../../test/support/random-input-schema.ts';
import { rng } from '../../test/support/seeded-random.ts';
import { checkInputSchema, compilesUnseen } from './input-schema.ts';

// Valid by the meta-schema and inside the subset, yet the runtime's ajv throws on each.
const VALID_BUT_UNCOMPILABLE: Array<[string, Record<string, unknown>, RegExp]> = [
  ['an empty enum', { type: 'object', properties: { a: { enum: [] } } }, /enum must have non-empty array/],
  ['a draft-04 `id`', { type: 'object', properties: { a: { id: 'x', type: 'string' } } }, /keyword "id"/],
  ['`$ref`s that only point at each other', { type: 'object', $defs: { a: { $ref: '#/$defs/a' } }, properties: { x: { $ref: '#/$defs/a' } } }, /call stack/],
  ['`nullable` without `type`', { type: 'object', properties: { a: { nullable: true } } }, /nullable/],
];

describe('checkInputSchema without compiling what it can vouch for', () => {
  for (const [what, schema, message] of VALID_BUT_UNCOMPILABLE) {
    it(`still refuses ${what}: its compilation is tried, and fails`, () => {
      expect(compilesUnseen(schema)).toBe(false);
      const problems = checkInputSchema(schema, '/inputSchema');
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatchObject({ pointer: '/inputSchema', code: 'input_schema' });
      expect(problems[0].message).toMatch(/^does not compile: /);
      expect(problems[0].message).toMatch(message);
    });
  }

  it('passes only schemas the runtime compiles, among 1,500 random ones built of the keywords it vouches for', () => {
    let vouched = 0;
    for (let seed = 1; seed <= 1500; seed++) {
      const schema = randomInputSchema(rng(seed));
      const problems = checkInputSchema(schema, '');
      if (problems.length > 0) continue;
      // Vouched for unseen when read as 2020-12; a draft-07 one is compiled by the judge instead.
      expect(compilesUnseen(schema), `seed ${seed}`).toBe(readsAsDraft2020(schema));
      vouched++;
      expect(() => compileInputSchema(structuredClone(schema)), `seed ${seed}: ${JSON.stringify(schema)}`).not.toThrow();
    }
    // Most random schemas are valid: the property is not checked on a handful.
    expect(vouched).toBeGreaterThan(1000);
  });

  it('does not vouch for a schema with keywords outside its list, wherever they stand', () => {
    expect(compilesUnseen({ type: 'object', properties: { a: { type: 'string' } } })).toBe(true);
    expect(compilesUnseen({ type: 'object', properties: { a: { type: 'string', $ref: '#' } } })).toBe(false);
    expect(compilesUnseen({ type: 'object', properties: { a: { type: 'array', items: { 'x-vendor': 1 } } } })).toBe(false);
    expect(compilesUnseen({ type: 'object', $defs: { d: { $id: 'https://example.com/d' } } })).toBe(false);
    expect(compilesUnseen({ type: 'object', properties: { a: { $schema: 'http://json-schema.org/draft-07/schema#' } } })).toBe(false);
    // Draft-07's meta-schema leaves 2020's keywords unchecked: the runtime's ajv must see it.
    expect(compilesUnseen({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toBe(false);
    expect(compilesUnseen({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' })).toBe(true);
  });
});

describe('draft-07 schemas holding keywords only 2020-12 knows', () => {
  // R7.6: a schema declaring draft-07 is read by draft-07's rules, where 2020-12's keywords are
  // unknown, hence annotations: whatever their value, they neither fail the schema nor a value.
  const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
  const cases: Array<[string, Record<string, unknown>, unknown]> = [
    ['minContains that is not a number', { $schema: DRAFT_07, type: 'object', minContains: 'x' }, {}],
    [
      'maxContains that is not a number, in a property',
      { $schema: DRAFT_07, type: 'object', properties: { a: { type: 'array', contains: { type: 'string' }, maxContains: true } } },
      { a: ['x', 'y'] },
    ],
    ['dependentRequired naming a string instead of a list', { $schema: DRAFT_07, type: 'object', dependentRequired: { a: 'b' } }, { a: 1 }],
    ['dependentRequired that is not an object', { $schema: DRAFT_07, type: 'object', dependentRequired: 5 }, {}],
  ];
  for (const [name, schema, value] of cases) {
    it(`accepts ${name}, as an annotation the runtime ignores`, () => {
      expect(checkInputSchema(schema, '')).toEqual([]);
      expect(compileInputSchema(schema)(value)).toBe(true);
    });
  }

  it('accepts a plain draft-07 schema, having compiled it', () => {
    const schema = { $schema: DRAFT_07, type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    expect(compilesUnseen(schema)).toBe(false);
    expect(checkInputSchema(schema, '')).toEqual([]);
  });

  it('accepts a draft-07 tuple `items` and validates each position (R7.6)', () => {
    const schema = {
      $schema: DRAFT_07,
      type: 'object',
      properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false } },
    };
    expect(checkInputSchema(schema, '/inputSchema')).toEqual([]);
    const validate = compileInputSchema(schema);
    expect(validate({ pair: ['a', 1] })).toBe(true);
    expect(validate({ pair: [1, 'a'] })).toBe(false);
    expect(validate.errors?.map((e) => e.instancePath)).toEqual(['/pair/0', '/pair/1']);
    expect(validate({ pair: ['a', 1, 2] })).toBe(false);
  });
});
