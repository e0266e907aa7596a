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

/**
 * Expects mayFailAnew to keep `schema` whenever one of its tries fails on a kind not yet pinned
 * (each kind in turn left unpinned); true when its tries fail on some kind at all.
 */
function expectNoKindSkipped(schema: Record<string, unknown>, seed: number, compiled: boolean): boolean {
  const tool = { id: 't', def: { inputSchema: schema } as unknown as BundleTool, validateInput: compileInputSchema(schema) } as unknown as LoadedTool;
  const kinds = new Set(invalidArguments(tool).map(([kind]) => kind));
  for (const kind of kinds) {
    const pinned = new Set(EVERY_KIND.filter((k) => k !== kind));
    expect(mayFailAnew(schema, pinned, compiled), `seed ${seed}: ${kind} from ${JSON.stringify(schema)}`).toBe(true);
  }
  return kinds.size > 0;
}

describe('mayFailAnew: skipping a schema in the search for schema-failure vectors', () => {
  it('never skips a schema whose tries fail on a kind not yet pinned (800 random schemas)', () => {
    let withKinds = 0;
    for (let seed = 1; seed <= 800; seed++) {
      const schema = randomInputSchema(rng(seed));
      if (checkInputSchema(schema, '').length > 0) continue;
      if (expectNoKindSkipped(schema, seed, false)) withKinds++;
    }
    expect(withKinds).toBeGreaterThan(400);
  });

  it('never skips a schema the judge compiled (combinators, references, draft-07) whose tries fail on a kind not yet pinned', () => {
    let withKinds = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const r = rng(seed);
      const base = randomInputSchema(r) as Record<string, unknown>;
      const props = { ...((base.properties ?? {}) as Record<string, unknown>) };
      const names = Object.keys(props);
      const some = () => randomInputSchema(r) as Record<string, unknown>;
      // Keywords outside what is judged without compiling, at the root or inside a property.
      const schema: Record<string, unknown> = { ...base, properties: props };
      if (names.length > 0 && r.chance(0.6)) {
        const name = r.pick(names);
        const prop = props[name];
        if (prop !== null && typeof prop === 'object')
          props[name] = { ...prop, ...r.pick([{ anyOf: [some(), { type: 'null' }] }, { not: some() }, { oneOf: [some()] }]) };
      }
      // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
      const combined = () => [{ anyOf: [some(), some()] }, { allOf: [some()] }, { not: { required: ['zz'] } }, { if: some(), then: some() }];
      if (r.chance(0.3)) Object.assign(schema, r.pick(combined()));
      if (r.chance(0.2)) Object.assign(schema, { $defs: { d: some() }, properties: { ...props, viaRef: { $ref: '#/$defs/d' } } });
      if (r.chance(0.2)) schema.$schema = 'http://json-schema.org/draft-07/schema#';
      if (checkInputSchema(schema, '').length > 0) continue;
      if (expectNoKindSkipped(schema, seed, true)) withKinds++;
    }
    expect(withKinds).toBeGreaterThan(150);
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
    // A value of another type fails `type` whatever else fails beside it (0 in a string's place
    // fails a `minimum` there too): two problems, never one of a new kind.
    expect(
      mayFailAnew({ ...schema, properties: { a: { type: 'string', minimum: 1, enum: ['x'] } } }, new Set(['type', 'required', 'additionalProperties'])),
    ).toBe(false);
    expect(mayFailAnew({ ...schema, properties: { a: { type: 'string', minimum: 1 } } }, new Set(['required', 'additionalProperties']))).toBe(true);
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

describe('the R7.10 vector (a connectionId member inside arguments) on nested schemas', () => {
  const closed = (extra: Record<string, unknown> = {}) => ({
    type: 'object',
    additionalProperties: false,
    required: ['q'],
    properties: {
      q: { type: 'string', maxLength: 10 },
      options: { type: 'object', additionalProperties: false, properties: { dry: { type: 'boolean' } } },
      labels: { type: 'array', items: { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } } },
      limit: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
      ...extra,
    },
  });
  const compile = (schemas: Record<string, unknown>[]) => {
    const r = compileBundle(
      snapshot({
        tools: schemas.map((inputSchema, i) => tool(`core__t${i}`, { inputSchema })),
        policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
      }),
      { version: 1, previousRevision: null, issuedAt: ISSUED_AT },
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.bundle.conformance.filter((v) => v.rules.includes('R7.10') && 'call' in v && !v.rules.includes('R7.8'));
  };

  it('is left out when every schema refuses such a member at every depth', () => {
    expect(compile([closed(), closed(), closed()])).toEqual([]);
  });

  it('calls the first tool whose schema lets a member in, at whatever depth it opens', () => {
    const openObject = closed({ options: { type: 'object', properties: { dry: { type: 'boolean' } } } });
    const openItems = closed({ labels: { type: 'array', items: { type: 'object' } } });
    const byRef = { ...closed({ more: { $ref: '#/$defs/open' } }), $defs: { open: { type: 'object' } } };
    for (const open of [openObject, openItems, byRef]) {
      const vectors = compile([closed(), open, closed()]);
      expect(vectors, JSON.stringify(open)).toHaveLength(1);
      const call = (vectors[0] as { call: { name: string; arguments: string } }).call;
      expect(call.name).toBe('core__t1');
      expect(call.arguments).toContain('"connectionId"');
    }
  });
});
