import { describe, expect, it } from 'vitest';
import { typeValueProblems } from './input-schema-rules.ts';

describe('typeValueProblems', () => {
  it('names a mistyped type value with its pointer and the type meant', () => {
    const problems = typeValueProblems({ type: 'object', properties: { name: { type: 'strng' } } }, '');
    expect(problems).toEqual([
      {
        pointer: '/properties/name/type',
        message: '"strng" is not a JSON Schema type: use one of string, number, integer, boolean, object, array, null (did you mean "string"?)',
      },
    ]);
  });

  it('finds bad types inside unions, arrays of types and $defs, and suggests nothing for a far miss', () => {
    const problems = typeValueProblems({ $defs: { a: { type: ['integer', 'nul'] } }, anyOf: [{ type: 'text' }], items: { type: 'array' } }, '');
    expect(problems.map((p) => p.pointer)).toEqual(['/anyOf/0/type', '/$defs/a/type/1']);
    expect(problems[1]!.message).toContain('did you mean "null"?');
    expect(problems[0]!.message).not.toContain('did you mean');
  });

  it('accepts every JSON type', () => {
    expect(typeValueProblems({ type: ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'] }, '')).toEqual([]);
  });
});
