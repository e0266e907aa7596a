import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { ajv, firstErrorValidatorFor, SCHEMA_BASE, schemas, toProblems, validate, validatorFor } from './index.ts';
import { FIRST_ERROR_KINDS, firstErrorValidatorsSource, metaValidatorsSource, PRECOMPILED_KINDS, policyValidatorsSource } from './validators-source.ts';
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
    expect(readFileSync(join(here, 'first-error-validators.gen.ts'), 'utf8')).toBe(firstErrorValidatorsSource());
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

  it('refuse through the first-error bundle validators what ajv compiling the schema refuses, naming the same first problem', () => {
    const fixtures = join(here, '../test/fixtures');
    const bundles: Record<(typeof FIRST_ERROR_KINDS)[number], unknown[]> = {
      bundle: readdirSync(join(fixtures, 'compile'))
        .filter((f) => f.endsWith('.golden.json'))
        .map((f) => JSON.parse(readFileSync(join(fixtures, 'compile', f), 'utf8')).bundle)
        .filter((b) => b !== undefined),
      'bundle-v1': readdirSync(join(fixtures, 'bundle-v1')).map((f) => JSON.parse(readFileSync(join(fixtures, 'bundle-v1', f), 'utf8'))),
    };
    for (const kind of FIRST_ERROR_KINDS) {
      const firstError = firstErrorValidatorFor(kind);
      const compiled = ajv.getSchema(`${SCHEMA_BASE}${kind}.schema.json`)!;
      expect(firstError, kind).not.toBe(validatorFor(kind));
      expect(bundles[kind].length, kind).toBeGreaterThan(0);
      let refused = 0;
      for (const bundle of bundles[kind]) {
        for (const doc of [bundle, ...mutations(bundle)]) {
          const verdict = compiled(structuredClone(doc));
          expect(firstError(structuredClone(doc)), `${kind} ${JSON.stringify(doc).slice(0, 200)}`).toBe(verdict);
          if (verdict) continue;
          refused++;
          expect(toProblems(firstError.errors ?? [])[0], kind).toEqual(toProblems(compiled.errors ?? [])[0]);
        }
      }
      expect(refused, kind).toBeGreaterThan(100);
    }
  });

  it('report each problem with a JSON pointer', () => {
    const r = validate('connection-grant', { connectionId: 'has space', subjects: [], tools: ['x'], extra: 1 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.pointer).sort()).toEqual(['/connectionId', '/extra', '/subjects']);
  });
});

/**
 * Documents that differ from `doc` in one place each: a member removed, a value replaced by null,
 * a number, an odd string or an empty array, an unknown member added (every 7th place, to stay quick).
 */
function mutations(doc: unknown): unknown[] {
  const out: unknown[] = [];
  const paths: (string | number)[][] = [];
  const walk = (node: unknown, path: (string | number)[]) => {
    paths.push(path);
    if (Array.isArray(node)) node.slice(0, 3).forEach((v, i) => walk(v, [...path, i]));
    else if (node !== null && typeof node === 'object') for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
  };
  walk(doc, []);
  paths.forEach((path, n) => {
    if (n % 7 !== 0 || path.length === 0) return;
    for (const replace of ['remove', null, 7, 'Not An Id!', [], { zz: 1 }, 'extra'] as const) {
      const copy = structuredClone(doc) as Record<string | number, unknown>;
      let parent = copy;
      for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
      const last = path[path.length - 1];
      if (replace === 'remove') {
        if (Array.isArray(parent)) parent.splice(last as number, 1);
        else delete parent[last];
      } else if (replace === 'extra') {
        const target = parent[last];
        if (target === null || typeof target !== 'object' || Array.isArray(target)) continue;
        (target as Record<string, unknown>).zz = 1;
      } else parent[last] = replace;
      out.push(copy);
    }
  });
  return out;
}
