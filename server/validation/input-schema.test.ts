import { describe, expect, it } from 'vitest';
import { compileInputSchema } from '../../runtime/load-bundle.ts';
import { randomInputSchema } from '../../test/support/random-input-schema.ts';
import { rng } from '../../test/support/seeded-random.ts';
import { checkInputSchema, compilesUnseen } from './input-schema.ts';

// Valid by the meta-schema and inside the subset, yet the runtime's ajv throws on each.
const VALID_BUT_UNCOMPILABLE: Array<[string, Record<string, unknown>, RegExp]> = [
  ['an empty enum', { type: 'object', properties: { a: { enum: [] } } }, /enum must have non-empty array/],
  ['a draft-04 `id`', { type: 'object', properties: { a: { id: 'x', type: 'string' } } }, /keyword "id"/],
  [
    'a draft-07 tuple `items`',
    { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { a: { type: 'array', items: [{ type: 'string' }] } } },
    /items value must be/,
  ],
  ['`$ref`s that only point at each other', { type: 'object', $defs: { a: { $ref: '#/$defs/a' } }, properties: { x: { $ref: '#/$defs/a' } } }, /call stack/],
  ['`nullable` without `type`', { type: 'object', properties: { a: { nullable: true } } }, /nullable/],
  ['one `$anchor` twice', { type: 'object', properties: { a: { $anchor: 'x' }, b: { $anchor: 'x' } } }, /more than one schema/],
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
      expect(compilesUnseen(schema), `seed ${seed}`).toBe(true);
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
    expect(compilesUnseen({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toBe(true);
  });
});
