import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ajv, SCHEMA_BASE, schemas, validate, validatorFor } from './index.ts';
import { metaValidatorsSource, PRECOMPILED_KINDS, policyValidatorsSource } from './validators-source.ts';
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

  it('keep the validators compiled ahead of time in step with the schemas (run npm run gen:types)', () => {
    expect(readFileSync(join(here, 'validators.gen.ts'), 'utf8')).toBe(policyValidatorsSource());
    expect(readFileSync(join(here, '../runtime/json-schema-meta.gen.ts'), 'utf8')).toBe(metaValidatorsSource());
  });

  it('answer through the validators compiled ahead of time exactly as ajv compiling the schema does', () => {
    const documents: unknown[] = [
      null,
      'text',
      [],
      {},
      { id: 'core__x', description: 'd', inputSchema: { type: 'object' }, effect: 'read_only', extra: 1 },
      { id: 'Not An Id', description: 7, inputSchema: [], effect: 'sometimes', groups: ['a', 'a'], redaction: { allow: ['bad path!'] } },
      { name: 'g', includes: ['x', 'x'], description: 'x'.repeat(9000) },
      { connectionId: 'has space', subjects: [], tools: ['x'], expiresAt: '2026-12-31T23:59:60Z' },
      { roles: { r: { allow: ['*'], deny: 3 } }, bindings: { s: ['r', 'r'] }, profiles: { p: { enable: [1] } }, bundleTtlSeconds: -1 },
      { reason: '', refresh: 'yes', rollbackTo: 0 },
    ];
    for (const kind of PRECOMPILED_KINDS) {
      const precompiled = validatorFor(kind);
      const compiled = ajv.getSchema(`${SCHEMA_BASE}${kind}.schema.json`)!;
      expect(precompiled, kind).not.toBe(compiled);
      for (const doc of documents) {
        const a = structuredClone(doc);
        const b = structuredClone(doc);
        expect(precompiled(a), `${kind} ${JSON.stringify(doc)}`).toBe(compiled(b));
        expect(precompiled.errors ?? null, kind).toEqual(compiled.errors ?? null);
        expect(a, 'defaults filled alike').toEqual(b);
      }
    }
  });

  it('report each problem with a JSON pointer', () => {
    const r = validate('connection-grant', { connectionId: 'has space', subjects: [], tools: ['x'], extra: 1 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.pointer).sort()).toEqual(['/connectionId', '/extra', '/subjects']);
  });
});
