import { describe, expect, it } from 'vitest';
import type { BundleTool } from '../../policy-schemas/types.gen.ts';
import { compileInputSchema } from '../../runtime/load-bundle.ts';
import type { LoadedTool } from '../../runtime/load-bundle.ts';
import { randomInputSchema } from '../../test/support/random-input-schema.ts';
import { rng } from '../../test/support/seeded-random.ts';
import { ISSUED_AT, snapshot, tool } from '../../test/engine/build.ts';
import { checkInputSchema } from '../validation/input-schema.ts';
import { compileBundle } from './compile-bundle.ts';
import { invalidArguments, mayFailAnew } from './conformance.ts';

// Every keyword name ajv could report, and then some: only `k` is left out of the kinds pinned.
const EVERY_KIND = [
  'type',
  'enum',
  'const',
  'required',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'dependentRequired',
  'dependentSchemas',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'contains',
  'false schema',
  'schema',
];

describe('mayFailAnew: skipping a schema in the search for schema-failure vectors', () => {
  it('never skips a schema whose tries fail on a kind not yet pinned (800 random schemas)', () => {
    let withKinds = 0;
    for (let seed = 1; seed <= 800; seed++) {
      const schema = randomInputSchema(rng(seed));
      if (checkInputSchema(schema, '').length > 0) continue;
      const tool = { id: 't', def: { inputSchema: schema } as unknown as BundleTool, validateInput: compileInputSchema(schema) } as unknown as LoadedTool;
      const kinds = new Set(invalidArguments(tool).map(([kind]) => kind));
      if (kinds.size > 0) withKinds++;
      for (const kind of kinds) {
        const pinned = new Set(EVERY_KIND.filter((k) => k !== kind));
        expect(mayFailAnew(schema, pinned), `seed ${seed}: ${kind} from ${JSON.stringify(schema)}`).toBe(true);
      }
    }
    expect(withKinds).toBeGreaterThan(400);
  });

  it('skips a schema only when every kind its tries could fail on is pinned', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['a'],
      properties: { a: { type: 'string', maxLength: 3 }, n: { type: 'integer', minimum: 1 } },
    };
    expect(mayFailAnew(schema, new Set(['type', 'required', 'additionalProperties']))).toBe(false);
    expect(mayFailAnew(schema, new Set(['type', 'required']))).toBe(true);
    // "x" in an integer's place fails only `type`; 0 in a string's place would fail a `minimum` there.
    expect(mayFailAnew({ ...schema, properties: { a: { type: 'string', minimum: 1 } } }, new Set(['type', 'required', 'additionalProperties']))).toBe(true);
    // Not read off: a schema needing ajv's compiler, or a subschema applied to every added member.
    expect(mayFailAnew({ ...schema, properties: { a: { $ref: '#' } } }, new Set(EVERY_KIND))).toBe(true);
    expect(mayFailAnew({ ...schema, additionalProperties: { type: 'string' } }, new Set(EVERY_KIND))).toBe(true);
  });
});

describe('conformance vectors for schemas with boolean subschemas', () => {
  it('compiles a tool that requires a property whose schema is `true` or `false`', () => {
    for (const a of [true, false]) {
      const r = compileBundle(
        snapshot({
          tools: [tool('core__t', { inputSchema: { type: 'object', required: ['a'], properties: { a } } })],
          policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
        }),
        { version: 1, previousRevision: null, issuedAt: ISSUED_AT },
      );
      expect(r.ok, String(a)).toBe(true);
    }
  });
});
