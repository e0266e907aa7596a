import { Ajv2020 } from 'ajv/dist/2020.js';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
import { describe, expect, it } from 'vitest';
import { metaSchemaValidator } from './json-schema-meta.ts';

// ajv checking schemas as the server's judge does, compiling the meta-schemas itself.
const ajv = new Ajv2020({ strict: false, validateFormats: false });
ajv.addMetaSchema(draft07, undefined, false);

describe('meta-schema validators compiled ahead of time', () => {
  it('judge input schemas exactly as ajv.validateSchema does, errors included, for 2020-12 and draft-07', () => {
    const schemas: Record<string, unknown>[] = [
      { type: 'object' },
      { type: 'objec' },
      { type: 'object', properties: { a: { type: 5 } } },
      { type: 'object', required: 'a' },
      { type: 'object', $defs: { x: { type: 'nope' } }, properties: { a: { $ref: '#/$defs/x' } } },
      { type: 'object', properties: { a: { items: { type: ['string', 'bogus'] } } } },
      { type: 'object', minProperties: 1.5, unevaluatedProperties: { type: 7 }, dependentSchemas: { a: 3 } },
      { $schema: 'https://json-schema.org/draft/2020-12/schema#', type: 'object', properties: { a: { enum: 'x' } } },
      { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { a: { minLength: -1 } } },
      { $schema: 'http://json-schema.org/draft-07/schema', type: 'object', items: [{ type: 'x' }] },
    ];
    for (const schema of schemas) {
      const validator = metaSchemaValidator(schema);
      expect(validator, JSON.stringify(schema)).toBeDefined();
      const expected = ajv.validateSchema(schema);
      expect(validator!(schema), JSON.stringify(schema)).toBe(expected);
      expect(validator!.errors ?? null).toEqual(ajv.errors ?? null);
    }
  });

  it('leave any other $schema to ajv, which refuses it', () => {
    const names: unknown[] = ['https://json-schema.org/draft/2019-09/schema', 'http://json-schema.org/draft-04/schema#', 7];
    for (const name of names) {
      const schema: Record<string, unknown> = { $schema: name, type: 'object' };
      expect(metaSchemaValidator(schema)).toBeUndefined();
      expect(() => ajv.validateSchema(schema)).toThrow();
    }
  });
});
