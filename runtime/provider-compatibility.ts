// The console runs this in the browser too: no node: modules here.
import { escapePointer } from '../policy-schemas/pointer.ts';

/**
 * The wire encoders a tool's input schema goes out through: OpenAI function tools (`encoders.ts`),
 * the same with `strict: true`, and Anthropic tools. Toolgate's dialect is wider than what some of
 * them accept; this says, per tool, which carry the schema unchanged and what stops the others.
 */
export const WIRE_ENCODERS = ['openai', 'openai-strict', 'anthropic'] as const;
export type WireEncoder = (typeof WIRE_ENCODERS)[number];

export const ENCODER_LABELS: Record<WireEncoder, string> = {
  openai: 'OpenAI function',
  'openai-strict': 'OpenAI strict',
  anthropic: 'Anthropic',
};

/** Where a schema stops an encoder: a JSON pointer from the tool (`/inputSchema/…`) and why. */
export type EncoderStop = { pointer: string; message: string };

/** Carried unchanged, or stopped at one or more places (in the order found, the root's first; at most 20). */
export type EncoderFit = { carried: true } | { carried: false; stops: EncoderStop[] };

export type ProviderCompatibility = Record<WireEncoder, EncoderFit>;

const MAX_STOPS = 20;

/** Which wire encoders carry this input schema unchanged, and for the others the keywords that stop them. */
export function providerCompatibility(inputSchema: unknown): ProviderCompatibility {
  return {
    openai: fit(rootStops(inputSchema, OPENAI_ROOT_REFUSED, 'OpenAI function tools')),
    'openai-strict': fit(strictStops(inputSchema)),
    anthropic: fit(rootStops(inputSchema, ANTHROPIC_ROOT_REFUSED, 'Anthropic tools')),
  };
}

/** One line for a person: "carried unchanged" or the first stop and how many more. */
export function describeFit(fitOf: EncoderFit): string {
  if (fitOf.carried) return 'carried unchanged';
  const [first] = fitOf.stops;
  const more = fitOf.stops.length - 1;
  return `stops at ${first.pointer}: ${first.message}${more > 0 ? ` (and ${more} more)` : ''}`;
}

function fit(stops: EncoderStop[]): EncoderFit {
  return stops.length === 0 ? { carried: true } : { carried: false, stops };
}

// What each API refuses at the root of a function's parameters, by the error it answers:
// OpenAI: "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level";
// Anthropic: "input_schema does not support oneOf, allOf, or anyOf at the top level".
const OPENAI_ROOT_REFUSED = ['oneOf', 'anyOf', 'allOf', 'enum', 'not'];
const ANTHROPIC_ROOT_REFUSED = ['oneOf', 'anyOf', 'allOf'];

function rootStops(schema: unknown, refused: string[], who: string): EncoderStop[] {
  if (!isObject(schema)) return [{ pointer: '/inputSchema', message: `${who} take a JSON Schema object` }];
  const stops: EncoderStop[] = [];
  if (schema.type !== 'object') stops.push({ pointer: '/inputSchema/type', message: `${who} need "type": "object" at the root` });
  for (const k of refused) if (k in schema) stops.push({ pointer: `/inputSchema/${k}`, message: `${who} refuse \`${k}\` at the root` });
  return stops;
}

// OpenAI Structured Outputs, "Supported schemas" (the subset `strict: true` accepts, for models that
// are not fine-tuned): the types, `anyOf` (never at the root), `$ref`/`$defs`, the listed string,
// number, array and object keywords, every object closed with `additionalProperties: false` and
// listing every property in `required`; limits of 5,000 properties, 10 levels of object nesting,
// 1,000 enum values and 120,000 characters of names and values. A keyword the page does not list
// (`default`, `examples`, `$schema`, `oneOf`…) is taken as not carried: a claim of "carried" must hold.
const STRICT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'title',
  'description',
  // Listed as unsupported only for fine-tuned models.
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'patternProperties',
  'unevaluatedProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'unevaluatedItems',
  'contains',
  'minContains',
  'maxContains',
  'minItems',
  'maxItems',
  'uniqueItems',
]);
/** Named by the page as not supported (the rest of what is missing is simply not listed). */
const STRICT_DOCUMENTED_UNSUPPORTED = new Set(['allOf', 'not', 'dependentRequired', 'dependentSchemas', 'if', 'then', 'else']);
const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const STRICT_LIMITS = { properties: 5_000, nesting: 10, enumValues: 1_000, characters: 120_000, bigEnum: 250, bigEnumCharacters: 15_000 };

// Keywords whose value is one subschema, or a map or list of them, that the strict walk enters.
const STRICT_ONE = ['items', 'unevaluatedProperties', 'propertyNames', 'unevaluatedItems', 'contains'];
const STRICT_MAP = ['properties', 'patternProperties', '$defs', 'definitions'];

function strictStops(root: unknown): EncoderStop[] {
  if (!isObject(root)) return [{ pointer: '/inputSchema', message: 'strict mode takes a JSON Schema object' }];
  const stops: EncoderStop[] = [];
  const totals = { properties: 0, enumValues: 0, characters: 0 };
  const add = (pointer: string, message: string) => {
    if (stops.length < MAX_STOPS) stops.push({ pointer, message });
  };
  if (root.type !== 'object') add('/inputSchema/type', 'strict mode needs "type": "object" at the root');
  if ('anyOf' in root) add('/inputSchema/anyOf', 'strict mode refuses `anyOf` at the root');

  const walk = (schema: unknown, pointer: string, nesting: number): void => {
    if (stops.length >= MAX_STOPS) return;
    if (!isObject(schema)) {
      add(
        pointer,
        Array.isArray(schema)
          ? 'a list of schemas (a tuple) is outside the subset strict mode documents'
          : `a ${typeof schema} schema is outside the subset strict mode documents`,
      );
      return;
    }
    const isObjectSchema = schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object')) || isObject(schema.properties);
    const level = isObjectSchema ? nesting + 1 : nesting;
    if (isObjectSchema && level > STRICT_LIMITS.nesting) add(pointer, `more than ${STRICT_LIMITS.nesting} levels of object nesting`);
    for (const key of Object.keys(schema)) {
      const at = `${pointer}/${escapePointer(key)}`;
      if (!STRICT_KEYWORDS.has(key)) {
        add(at, STRICT_DOCUMENTED_UNSUPPORTED.has(key) ? `strict mode does not support \`${key}\`` : `\`${key}\` is outside the subset strict mode documents`);
      }
    }
    if ('$ref' in schema && Object.keys(schema).length > 1) add(`${pointer}/$ref`, 'strict mode takes a `$ref` only with no keyword beside it');
    if ('format' in schema && (typeof schema.format !== 'string' || !STRICT_FORMATS.has(schema.format)))
      add(`${pointer}/format`, `strict mode knows only the formats ${[...STRICT_FORMATS].join(', ')}`);
    if (isObjectSchema) {
      if (schema.additionalProperties !== false) add(`${pointer}/additionalProperties`, 'strict mode needs `"additionalProperties": false` on every object');
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      const missing = Object.keys(isObject(schema.properties) ? schema.properties : {}).filter((p) => !required.has(p));
      if (missing.length > 0)
        add(
          `${pointer}/required`,
          `strict mode needs every property required (optional ones as a union with null): ${missing.map((m) => JSON.stringify(m)).join(', ')} not required`,
        );
    }
    count(schema, pointer);
    for (const key of STRICT_ONE) if (key in schema && schema[key] !== false) walk(schema[key], `${pointer}/${key}`, level);
    for (const key of STRICT_MAP) {
      const map = schema[key];
      if (!isObject(map)) continue;
      for (const [name, sub] of Object.entries(map)) {
        if (key === 'properties' || key === '$defs' || key === 'definitions') totals.characters += name.length;
        walk(sub, `${pointer}/${key}/${escapePointer(name)}`, key === 'properties' || key === 'patternProperties' ? level : 0);
      }
    }
    if (Array.isArray(schema.anyOf)) schema.anyOf.forEach((sub, i) => walk(sub, `${pointer}/anyOf/${i}`, level));
  };

  const count = (schema: Record<string, unknown>, pointer: string) => {
    if (isObject(schema.properties)) {
      totals.properties += Object.keys(schema.properties).length;
      if (totals.properties > STRICT_LIMITS.properties) add(`${pointer}/properties`, `more than ${STRICT_LIMITS.properties} properties in all`);
    }
    if (Array.isArray(schema.enum)) {
      const before = totals.enumValues;
      totals.enumValues += schema.enum.length;
      if (before <= STRICT_LIMITS.enumValues && totals.enumValues > STRICT_LIMITS.enumValues)
        add(`${pointer}/enum`, `more than ${STRICT_LIMITS.enumValues} enum values in all`);
      const strings = schema.enum.filter((v): v is string => typeof v === 'string');
      const length = strings.reduce((n, s) => n + s.length, 0);
      totals.characters += length;
      if (schema.enum.length > STRICT_LIMITS.bigEnum && length > STRICT_LIMITS.bigEnumCharacters)
        add(`${pointer}/enum`, `an enum of more than ${STRICT_LIMITS.bigEnum} values holds more than ${STRICT_LIMITS.bigEnumCharacters} characters`);
    }
    if (typeof schema.const === 'string') totals.characters += schema.const.length;
  };

  walk(root, '/inputSchema', 0);
  if (totals.characters > STRICT_LIMITS.characters)
    add('/inputSchema', `more than ${STRICT_LIMITS.characters} characters of property names, definition names, enum and const values`);
  return stops;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
