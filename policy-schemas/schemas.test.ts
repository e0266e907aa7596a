import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ajv, SCHEMA_BASE, schemas, validate, validatorFor } from './index.ts';
import { generateTypesSource } from './types-source.ts';

const here = dirname(fileURLToPath(import.meta.url));

describe('policy schemas', () => {
  it('give every schema an absolute $id matching its file and closed objects at the top', () => {
    for (const [kind, s] of Object.entries(schemas)) {
      expect(s.$id).toBe(`${SCHEMA_BASE}${kind}.schema.json`);
      if (s.type === 'object' && kind !== 'common') expect(s.additionalProperties, kind).toBe(false);
    }
  });

  it('are each valid JSON Schema 2020-12 and compile (the server adds them without this check)', () => {
    for (const [kind, s] of Object.entries(schemas)) {
      expect(ajv.validateSchema(s), `${kind}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
      expect(() => validatorFor(kind), kind).not.toThrow();
    }
    expect(ajv.validateSchema({ type: 'object', properties: { a: { type: 'strin' } } })).toBe(false);
  });

  it('keep types.gen.ts in step with the schemas (run npm run gen:types)', async () => {
    expect(readFileSync(join(here, 'types.gen.ts'), 'utf8')).toBe(await generateTypesSource());
  });

  it('report each problem with a JSON pointer', () => {
    const r = validate('connection-grant', { connectionId: 'has space', subjects: [], tools: ['x'], extra: 1 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.pointer).sort()).toEqual(['/connectionId', '/extra', '/subjects']);
  });
});
