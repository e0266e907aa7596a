// Random tool input schemas inside the restricted subset, built only of keywords the judge can vouch
// compile without compiling them (server/validation/input-schema.ts), with values the meta-schema
// accepts, for property tests of that judgement and of what the compiler reads off a schema.
import type { Rng } from './seeded-random.ts';

const TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object', 'null'] as const;
const PATTERNS = ['^a', '^[a-z]+$', '[0-9]{2}', '^(a+)+$', 'x|y', '^\\p{L}*$'];
const FORMATS = ['email', 'date-time', 'uri', 'uuid', 'int32', 'double'];
const NAMES = ['a', 'b', 'q', 'limit', 'type', 'enum', 'pattern', 'items', '$ref', 'x y'];

function scalar(r: Rng): unknown {
  return r.pick<unknown>(['x', '', 0, 1, -2.5, true, false, null, [1], { k: 'v' }]);
}

/** One subschema, `depth` levels below the root. */
function subschema(r: Rng, depth: number): unknown {
  if (depth > 2 || r.chance(0.1)) return r.chance(0.5);
  const s: Record<string, unknown> = {};
  const type = r.chance(0.15) ? r.some(TYPES, 2) : r.pick(TYPES);
  if (!Array.isArray(type) || type.length > 0) s.type = Array.isArray(type) && type.length === 1 ? type[0] : type;
  const kinds = Array.isArray(type) ? type : [type];
  if (kinds.includes('string') || r.chance(0.1)) {
    if (r.chance(0.5)) s.minLength = r.int(3);
    if (r.chance(0.5)) s.maxLength = r.int(5) + 1;
    if (r.chance(0.4)) s.pattern = r.pick(PATTERNS);
    if (r.chance(0.3)) s.format = r.pick(FORMATS);
  }
  if (kinds.includes('number') || kinds.includes('integer') || r.chance(0.1)) {
    if (r.chance(0.5)) s.minimum = r.int(3) - 1;
    if (r.chance(0.4)) s.maximum = r.int(10) + 2;
    if (r.chance(0.3)) s.exclusiveMinimum = -5;
    if (r.chance(0.3)) s.multipleOf = r.pick([1, 2, 0.5]);
    if (r.chance(0.2)) s.format = r.pick(FORMATS);
  }
  if (kinds.includes('array') || r.chance(0.1)) {
    if (r.chance(0.5)) s.items = subschema(r, depth + 1);
    if (r.chance(0.2)) s.prefixItems = [subschema(r, depth + 1)];
    if (r.chance(0.3)) s.minItems = r.int(2);
    if (r.chance(0.3)) s.maxItems = r.int(3) + 1;
    if (r.chance(0.2)) s.uniqueItems = r.chance(0.5);
    if (r.chance(0.2)) {
      s.contains = subschema(r, depth + 1);
      if (r.chance(0.5)) s.minContains = r.int(2);
    }
    if (r.chance(0.1)) s.unevaluatedItems = r.chance(0.5);
  }
  if (kinds.includes('object') || r.chance(0.1)) Object.assign(s, objectKeywords(r, depth));
  if (r.chance(0.15)) s.enum = Array.from({ length: r.int(3) + 1 }, () => scalar(r));
  if (r.chance(0.1)) s.const = scalar(r);
  for (const k of ['title', 'description', '$comment'] as const) if (r.chance(0.2)) s[k] = `${k} text`;
  if (r.chance(0.2)) s.default = scalar(r);
  if (r.chance(0.1)) s.examples = [scalar(r)];
  if (r.chance(0.1)) s.deprecated = r.chance(0.5);
  if (r.chance(0.1)) s.readOnly = r.chance(0.5);
  return s;
}

function objectKeywords(r: Rng, depth: number): Record<string, unknown> {
  const s: Record<string, unknown> = {};
  const names = r.some(NAMES, 3);
  if (names.length > 0 || r.chance(0.5)) s.properties = Object.fromEntries(names.map((n) => [n, subschema(r, depth + 1)]));
  if (names.length > 0 && r.chance(0.6)) s.required = r.some(names, 2);
  if (r.chance(0.5)) s.additionalProperties = r.chance(0.3) ? subschema(r, depth + 1) : !r.chance(0.6);
  if (r.chance(0.15)) s.minProperties = r.int(2);
  if (r.chance(0.15)) s.maxProperties = r.int(3) + 1;
  if (r.chance(0.1)) s.propertyNames = { maxLength: r.int(10) + 1 };
  if (names.length > 1 && r.chance(0.1)) s.dependentRequired = { [names[0]]: [names[1]] };
  if (names.length > 0 && r.chance(0.1)) s.dependentSchemas = { [names[0]]: subschema(r, depth + 1) };
  if (r.chance(0.1)) s.unevaluatedProperties = r.chance(0.5);
  if (r.chance(0.1)) s[r.chance(0.5) ? '$defs' : 'definitions'] = { d: subschema(r, depth + 1) };
  return s;
}

/** A random root input schema (an object schema), sometimes declaring draft 2020-12 or draft-07. */
export function randomInputSchema(r: Rng): Record<string, unknown> {
  const root: Record<string, unknown> = { type: 'object', ...objectKeywords(r, 0) };
  if (r.chance(0.1)) root.$schema = r.pick(['https://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft-07/schema#']);
  return root;
}
