import type { ErrorObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import draft07MetaSchema from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
// No node: imports here (directly or through what is imported): the console runs subsetProblems as you type.
import { ONE_SCHEMA, SCHEMA_LIST, SCHEMA_MAP, schemaDialectProblems } from '../../runtime/json-schema-walk.ts';
import { metaSchemaValidator, readsAsDraft2020 } from '../../runtime/json-schema-meta.ts';
import { compileMetaCheckedInputSchema } from '../../runtime/load-bundle.ts';
import type { ProblemDetail } from '../errors.ts';
import { jsonShapeProblems } from '../http/safe-json.ts';

/** Annotation keywords: they describe a value and never make it fail. */
export const ANNOTATION_KEYWORDS = ['title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment'] as const;

// Keywords whose compilation by the runtime's ajv (strict off) cannot fail once the schema is valid
// by the 2020-12 meta-schema and the walk found no problem: their values are type-checked by the
// meta-schema, the patterns among them compile in the walk with the very engine ajv uses, and none
// of them names another schema or an identifier (no `$ref`, `$id` or `$anchor`). A schema built only
// of these, in every subschema, is judged without generating its validator's code, which costs
// milliseconds a schema; any other keyword (`$ref`, `nullable`, draft-04 `id`, a tuple `items`, an
// empty `enum`, vendor keywords…) sends the schema through ajv's compiler as before.
const COMPILES_UNSEEN = new Set<string>([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'enum',
  'const',
  'minProperties',
  'maxProperties',
  'propertyNames',
  'dependentRequired',
  'dependentSchemas',
  'unevaluatedProperties',
  'unevaluatedItems',
  '$defs',
  'definitions',
  ...ANNOTATION_KEYWORDS,
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
]);

// A separate ajv, only to check that an input schema is itself a valid JSON Schema. Made on first
// use, so the console can load this module's rules without running generated code (its CSP forbids it).
let metaAjvInstance: Ajv2020 | undefined;
function metaAjv(): Ajv2020 {
  if (!metaAjvInstance) {
    const fresh = new Ajv2020({ strict: false, validateFormats: false });
    // MCP servers built with zod commonly declare draft-07; without its meta-schema validateSchema throws.
    // ajv's own copy needs no check against 2020-12 (that would compile the 2020-12 meta-schema an
    // extra time on first use; it is compiled once, when a schema is first checked).
    fresh.addMetaSchema(draft07MetaSchema, undefined, false);
    metaAjvInstance = fresh;
  }
  return metaAjvInstance;
}

/** What a schema is for: an input schema is an object schema and may not name `connectionId`. */
export type SchemaRole = 'input' | 'output' | 'arguments';

/**
 * Judges a JSON Schema in Toolgate's dialect (docs/spec.md, R7.6 and R7.11–R7.14): 2020-12, or
 * draft-07 when `$schema` names it, with the whole vocabulary (combinators, conditionals,
 * `patternProperties`, `$defs`/`definitions` with local `$ref`). Refused, each with the pointer
 * where it sits: remote or non-pointer `$ref`, `$dynamicRef`/`$recursiveRef`, a nested `$id`,
 * anchors, a pattern (or `patternProperties` name) outside RE2, nesting deeper than the limit, a
 * schema that is not valid by its meta-schema or does not compile. Subschemas are found by the
 * vocabulary (where a subschema can stand), so a keyword-like name used as a `$defs` entry or a
 * property is still walked, and a `$ref` may only point at such a place. `role` adds the input
 * schema's own rules (an object schema; no `connectionId` property at any depth).
 * The one judge of schemas: saves, MCP import, approval, the compiler and argument constraints.
 */
export function judgeSchema(schema: unknown, pointer: string, role: SchemaRole): ProblemDetail[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    return [{ pointer, message: 'must be a JSON Schema object', code: 'input_schema' }];
  }
  const shape = jsonShapeProblems(schema);
  if (shape.length) return shape.map((p) => ({ ...p, pointer: pointer + p.pointer }));
  const root = schema as Record<string, unknown>;
  const problems = dialectProblems(root, pointer, role);
  let valid: boolean;
  let errors: ErrorObject[] | null | undefined;
  // The usual meta-schemas are compiled ahead of time (runtime/json-schema-meta.ts); ajv judges any other.
  const meta = metaSchemaValidator(root);
  try {
    valid = meta ? (meta(schema) as boolean) : (metaAjv().validateSchema(schema) as boolean);
    errors = meta ? meta.errors : metaAjv().errors;
  } catch (e) {
    return [
      ...problems,
      { pointer: `${pointer}/$schema`, message: `names a meta-schema that is not supported: ${(e as Error).message}`, code: 'input_schema' },
    ];
  }
  if (!valid) {
    for (const e of errors ?? []) {
      problems.push({ pointer: pointer + e.instancePath, message: `is not valid JSON Schema: ${e.message}`, code: 'input_schema' });
    }
  }
  if (problems.length === 0 && !judgedWithoutCompiling(root)) {
    // Valid by the meta-schema is not enough (a dangling `$ref`, an empty `enum`, a draft-04 `id`): it
    // must compile in the runtime's own ajv, or every bundle naming the tool would fail to compile.
    // Valid by the meta-schema was checked just above, so that ajv does not check it again.
    try {
      compileMetaCheckedInputSchema(root);
    } catch (e) {
      problems.push({ pointer, message: `does not compile: ${(e as Error).message}`, code: 'input_schema' });
    }
  }
  return problems;
}

/** judgeSchema for a tool's input schema (pointer `/inputSchema` unless told). */
export function checkInputSchema(schema: unknown, pointer = '/inputSchema'): ProblemDetail[] {
  return judgeSchema(schema, pointer, 'input');
}

/**
 * An input schema's dialect rules alone (no meta-schema check, no compilation): what the console
 * re-checks on every keystroke, with the very messages the server answers.
 */
export function subsetProblems(root: Record<string, unknown>, pointer = ''): ProblemDetail[] {
  return dialectProblems(root, pointer, 'input');
}

function dialectProblems(root: Record<string, unknown>, pointer: string, role: SchemaRole): ProblemDetail[] {
  const problems: ProblemDetail[] = [];
  if (role === 'input' && root.type !== 'object') {
    problems.push({ pointer: `${pointer}/type`, message: 'must be "object": tool arguments are an object', code: 'input_schema' });
  }
  for (const p of schemaDialectProblems(root, role === 'input')) problems.push({ ...p, pointer: pointer + p.pointer });
  return problems;
}

/**
 * Whether the runtime's ajv is sure to compile this schema, given that it is valid by its meta-schema
 * and in the subset: it reads as draft 2020-12, every subschema holds only keywords of
 * COMPILES_UNSEEN (`$schema` at the root too), `items` is one schema (not a draft-07 tuple, which the 2020-12 ajv refuses) and no `enum` is
 * empty. Subschemas are found as walkSchema finds them.
 */
export function compilesUnseen(root: Record<string, unknown>): boolean {
  return keywordsCompilingUnseen(root) !== null;
}

/**
 * The keywords of every subschema (`false schema` for a `false` one, as ajv names its failure) when
 * compilesUnseen holds, else null: what a validator of the schema can name in its errors.
 */
export function keywordsCompilingUnseen(root: Record<string, unknown>): Set<string> | null {
  // The list assumes the 2020-12 meta-schema checked every value. A draft-07 schema was checked
  // against draft-07's, which does not know 2020's keywords (`minContains`, `dependentRequired`…)
  // and lets any value through, while the runtime's 2020-12 ajv refuses a bad one: compile it.
  if (!readsAsDraft2020(root)) return null;
  const keywords = new Set<string>();
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    if (typeof node === 'boolean') {
      if (!node) keywords.add('false schema');
      continue;
    }
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return null;
    for (const key of Object.keys(node)) {
      const value = (node as Record<string, unknown>)[key];
      if (!COMPILES_UNSEEN.has(key) && !(key === '$schema' && node === root)) return null;
      if (key === 'enum' && (!Array.isArray(value) || value.length === 0)) return null;
      keywords.add(key);
      if (ONE_SCHEMA.has(key)) {
        if (Array.isArray(value)) return null;
        stack.push(value);
      } else if (SCHEMA_LIST.has(key)) {
        if (!Array.isArray(value)) return null;
        stack.push(...value);
      } else if (SCHEMA_MAP.has(key)) {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
        stack.push(...Object.values(value));
      }
    }
  }
  return keywords;
}

// Beyond COMPILES_UNSEEN, what the judge vouches for without ajv's compiler (compiling one schema
// with an `anyOf` cost ~4 ms, nearly all of importing a Pydantic or Zod server): the applicators
// only apply subschemas (their values are type-checked by the meta-schema, and each subschema is
// held to the same list), `patternProperties` names are compiled in the walk by the engine ajv
// uses, and a local `$ref` is followed here to the subschema it names (see refsResolve).
// `discriminator` (OpenAPI's, which Pydantic writes beside a tagged `oneOf`) is a keyword the
// runtime's ajv does not know (its `discriminator` option is off): an annotation, never compiled.
const APPLICATORS = ['anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else', 'patternProperties', '$ref', 'discriminator'];
const JUDGED_2020 = new Set<string>([...COMPILES_UNSEEN, ...APPLICATORS]);

// A draft-07 schema is compiled by the runtime's draft-07 ajv and was checked against draft-07's
// meta-schema: only keywords draft-07 knows and its meta-schema types, read there as in 2020-12
// (no `$defs`, `prefixItems`, `dependentRequired`…, which draft-07 leaves unchecked; a tuple
// `items` or `dependencies` is compiled as before).
const JUDGED_DRAFT_07 = new Set<string>([
  ...[...COMPILES_UNSEEN].filter(
    (k) =>
      ![
        '$defs',
        'prefixItems',
        'minContains',
        'maxContains',
        'dependentRequired',
        'dependentSchemas',
        'unevaluatedProperties',
        'unevaluatedItems',
        'deprecated',
        'contentSchema',
      ].includes(k),
  ),
  ...APPLICATORS,
]);

/**
 * Whether the judge may vouch that the runtime's ajv compiles this schema, given that it is valid
 * by its meta-schema and the dialect walk found nothing: every subschema holds only keywords of
 * its draft's list above (`$schema` at the root), `items` is one schema, no `enum` is empty, and
 * every `$ref` resolves (refsResolve). Anything else is compiled, as before.
 */
export function judgedWithoutCompiling(root: Record<string, unknown>): boolean {
  const draft2020 = readsAsDraft2020(root);
  if (!draft2020 && metaSchemaValidator(root) === undefined) return false;
  const known = draft2020 ? JUDGED_2020 : JUDGED_DRAFT_07;
  const refs: string[] = [];
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    if (typeof node === 'boolean') continue;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return false;
    for (const key of Object.keys(node)) {
      const value = (node as Record<string, unknown>)[key];
      if (!known.has(key) && !(key === '$schema' && node === root)) return false;
      if (key === 'enum' && (!Array.isArray(value) || value.length === 0)) return false;
      if (key === '$ref') {
        if (typeof value !== 'string') return false;
        refs.push(value);
      } else if (ONE_SCHEMA.has(key)) {
        if (Array.isArray(value)) return false;
        stack.push(value);
      } else if (SCHEMA_LIST.has(key)) {
        if (!Array.isArray(value)) return false;
        stack.push(...value);
      } else if (SCHEMA_MAP.has(key)) {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
        stack.push(...Object.values(value));
      }
    }
  }
  return refs.length === 0 || refsResolve(root, refs);
}

/** A `$ref` the judge follows itself: `#`, or `#/` and plain names (no escapes, no percent-encoding). */
const PLAIN_REF = /^#(?:\/[A-Za-z0-9_$.-]+)*$/;

/**
 * Whether each `$ref` names a schema object here (the walk already found a subschema at its place)
 * and no chain of references comes back on itself: ajv follows a schema holding a `$ref` to the
 * next without end (`a: {$ref: b}, b: {$ref: a}` overflows its stack). Any other form of `$ref`
 * is left to the compiler.
 */
function refsResolve(root: Record<string, unknown>, refs: string[]): boolean {
  const target = (ref: string): unknown => {
    if (!PLAIN_REF.test(ref)) return undefined;
    let node: unknown = root;
    for (const part of ref.slice(1).split('/').slice(1)) {
      if (node === null || typeof node !== 'object' || Array.isArray(node) || !Object.hasOwn(node, part)) return undefined;
      node = (node as Record<string, unknown>)[part];
    }
    return node;
  };
  for (const ref of new Set(refs)) {
    const seen = new Set<string>();
    let next: string | undefined = ref;
    while (next !== undefined) {
      if (seen.has(next)) return false;
      seen.add(next);
      const node = target(next);
      if (node === null || typeof node !== 'object' || Array.isArray(node)) return false;
      const onward = (node as Record<string, unknown>).$ref;
      next = onward === undefined ? undefined : typeof onward === 'string' ? onward : '';
    }
  }
  return true;
}
