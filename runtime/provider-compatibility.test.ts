import { describe, expect, it } from 'vitest';
import { describeFit, providerCompatibility } from './provider-compatibility.ts';

// OpenAI's own strict function example (Structured Outputs guide): every encoder carries it.
const strictWeather = {
  type: 'object',
  properties: {
    location: { type: 'string', description: 'The location to get the weather for' },
    unit: { type: ['string', 'null'], description: 'The unit to return the temperature in', enum: ['F', 'C'] },
  },
  additionalProperties: false,
  required: ['location', 'unit'],
};

// What Pydantic writes for `def search(query: str, limit: Optional[int] = None)` (FastMCP).
const pydanticOptional = {
  type: 'object',
  title: 'searchArguments',
  properties: {
    query: { type: 'string', title: 'Query' },
    limit: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null, title: 'Limit' },
  },
  required: ['query'],
};

// What zod-to-json-schema writes for a discriminated union at the root.
const zodRootUnion = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  anyOf: [
    {
      type: 'object',
      properties: { kind: { type: 'string', const: 'file' }, path: { type: 'string' } },
      required: ['kind', 'path'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: { kind: { type: 'string', const: 'url' }, url: { type: 'string', format: 'uri' } },
      required: ['kind', 'url'],
      additionalProperties: false,
    },
  ],
};

const closed = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });

describe('providerCompatibility', () => {
  it('carries a strict-ready schema through every encoder', () => {
    expect(providerCompatibility(strictWeather)).toEqual({ openai: { carried: true }, 'openai-strict': { carried: true }, anthropic: { carried: true } });
  });

  it('carries a Pydantic optional field through OpenAI functions and Anthropic, and names what stops strict mode', () => {
    const r = providerCompatibility(pydanticOptional);
    expect(r.openai).toEqual({ carried: true });
    expect(r.anthropic).toEqual({ carried: true });
    expect(r['openai-strict'].carried).toBe(false);
    if (r['openai-strict'].carried) return;
    expect(r['openai-strict'].stops.map((s) => s.pointer)).toEqual([
      '/inputSchema/additionalProperties',
      '/inputSchema/required',
      '/inputSchema/properties/limit/default',
    ]);
    expect(r['openai-strict'].stops[1].message).toContain('"limit" not required');
    expect(describeFit(r['openai-strict'])).toBe(
      'stops at /inputSchema/additionalProperties: strict mode needs `"additionalProperties": false` on every object (and 2 more)',
    );
  });

  it('stops every encoder at a union at the root, each at the keyword it refuses', () => {
    const r = providerCompatibility(zodRootUnion);
    expect(r.openai).toEqual({
      carried: false,
      stops: [
        { pointer: '/inputSchema/type', message: 'OpenAI function tools need "type": "object" at the root' },
        { pointer: '/inputSchema/anyOf', message: 'OpenAI function tools refuse `anyOf` at the root' },
      ],
    });
    expect(r.anthropic.carried === false && r.anthropic.stops.map((s) => s.pointer)).toEqual(['/inputSchema/type', '/inputSchema/anyOf']);
    const strict = r['openai-strict'];
    expect(strict.carried === false && strict.stops.map((s) => s.pointer)).toEqual([
      '/inputSchema/type',
      '/inputSchema/anyOf',
      '/inputSchema/$schema',
      '/inputSchema/anyOf/1/properties/url/format',
    ]);
  });

  it('tells OpenAI functions (enum and not refused at the root) from Anthropic (only the combinators)', () => {
    const r = providerCompatibility({ type: 'object', properties: {}, not: { required: ['x'] } });
    expect(r.openai).toMatchObject({ carried: false, stops: [{ pointer: '/inputSchema/not' }] });
    expect(r.anthropic).toEqual({ carried: true });
    const oneOf = providerCompatibility({ type: 'object', oneOf: [{ required: ['a'] }, { required: ['b'] }] });
    expect(oneOf.anthropic).toMatchObject({
      carried: false,
      stops: [{ pointer: '/inputSchema/oneOf', message: 'Anthropic tools refuse `oneOf` at the root' }],
    });
  });

  it('carries nested combinators through OpenAI functions and Anthropic, not through strict mode', () => {
    const schema = closed({
      filter: {
        allOf: [{ type: 'object' }],
        if: { required: ['a'] },
        // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
        then: { required: ['b'] },
      },
      pick: { oneOf: [{ type: 'string' }, { type: 'number' }] },
    });
    const r = providerCompatibility(schema);
    expect(r.openai).toEqual({ carried: true });
    expect(r.anthropic).toEqual({ carried: true });
    expect(r['openai-strict']).toEqual({
      carried: false,
      stops: [
        { pointer: '/inputSchema/properties/filter/allOf', message: 'strict mode does not support `allOf`' },
        { pointer: '/inputSchema/properties/filter/if', message: 'strict mode does not support `if`' },
        { pointer: '/inputSchema/properties/filter/then', message: 'strict mode does not support `then`' },
        { pointer: '/inputSchema/properties/pick/oneOf', message: '`oneOf` is outside the subset strict mode documents' },
      ],
    });
  });

  it('holds strict mode to its formats, closed nested objects and plain $refs', () => {
    const schema = {
      ...closed({
        when: { type: 'string', format: 'date-time' },
        site: { type: 'string', format: 'uri' },
        owner: { $ref: '#/$defs/person', description: 'who owns it' },
        tags: { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } }, required: ['k'] } },
      }),
      $defs: { person: closed({ name: { type: 'string' } }) },
    };
    const strict = providerCompatibility(schema)['openai-strict'];
    expect(strict.carried === false && strict.stops.map((s) => s.pointer)).toEqual([
      '/inputSchema/properties/site/format',
      '/inputSchema/properties/owner/$ref',
      '/inputSchema/properties/tags/items/additionalProperties',
    ]);
    const fixed = {
      ...schema,
      properties: {
        ...schema.properties,
        site: { type: 'string' },
        owner: { $ref: '#/$defs/person' },
        tags: { type: 'array', items: closed({ k: { type: 'string' } }) },
      },
    };
    expect(providerCompatibility(fixed)['openai-strict']).toEqual({ carried: true });
  });

  it('holds strict mode to its documented limits: nesting, enum values', () => {
    let deep: Record<string, unknown> = closed({ leaf: { type: 'string' } });
    for (let i = 0; i < 10; i++) deep = closed({ next: deep });
    const nested = providerCompatibility(deep)['openai-strict'];
    expect(nested.carried === false && nested.stops[0].message).toBe('more than 10 levels of object nesting');
    let nine: Record<string, unknown> = closed({ leaf: { type: 'string' } });
    for (let i = 0; i < 9; i++) nine = closed({ next: nine });
    expect(providerCompatibility(nine)['openai-strict']).toEqual({ carried: true });

    const values = Array.from({ length: 1001 }, (_, i) => i);
    expect(providerCompatibility(closed({ n: { type: 'integer', enum: values } }))['openai-strict']).toMatchObject({
      carried: false,
      stops: [{ pointer: '/inputSchema/properties/n/enum', message: 'more than 1000 enum values in all' }],
    });
    expect(providerCompatibility(closed({ n: { type: 'integer', enum: values.slice(1) } }))['openai-strict']).toEqual({ carried: true });
  });

  it('carries the object keywords OpenAI lists as unsupported only for fine-tuned models', () => {
    const schema = {
      ...closed({ labels: { type: 'object', patternProperties: { '^x-': { type: 'string' } }, additionalProperties: false, maxProperties: 5 } }),
    };
    expect(providerCompatibility(schema)['openai-strict']).toEqual({ carried: true });
  });

  it('answers for a schema that is not an object at all, never throwing', () => {
    for (const bad of [null, 'object', [], 3]) {
      const r = providerCompatibility(bad);
      expect(r.openai.carried || r.anthropic.carried || r['openai-strict'].carried).toBe(false);
    }
    expect(providerCompatibility({ type: 'object', properties: { x: true } })['openai-strict']).toMatchObject({
      carried: false,
      stops: [{ pointer: '/inputSchema/additionalProperties' }, { pointer: '/inputSchema/required' }, { pointer: '/inputSchema/properties/x' }],
    });
  });

  it('names a key with a slash or tilde in its pointer escaped', () => {
    const r = providerCompatibility(closed({ 'a/b~c': { type: 'string', default: 'x' } }))['openai-strict'];
    expect(r.carried === false && r.stops[0].pointer).toBe('/inputSchema/properties/a~1b~0c/default');
  });
});
