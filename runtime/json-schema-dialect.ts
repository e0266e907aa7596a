// The console also runs this in the browser: no node: modules here.
import {
  _,
  type Ajv as AjvCore,
  type Code,
  type CodeKeywordDefinition,
  type FuncKeywordDefinition,
  type KeywordCxt,
  Name,
  str,
  type ValidateFunction,
} from 'ajv';
import { alwaysValidSchema } from 'ajv/dist/compile/util.js';
import { validateTuple } from 'ajv/dist/vocabularies/applicator/items.js';
import { validateArray } from 'ajv/dist/vocabularies/code.js';
import type { KeywordErrorCxt } from 'ajv/dist/types/index.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv as AjvDraft07 } from 'ajv/dist/ajv.js';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
import { canonicalJson } from './canonical-json.ts';
import { ASSERTED_FORMATS } from './json-schema-formats.ts';
import { metaSchemaValidator, readsAsDraft2020 } from './json-schema-meta.ts';
import { schemaDialectProblems } from './json-schema-walk.ts';
import { linearRegExp } from './linear-regexp.ts';

/**
 * How deep a schema or an argument value may nest (docs/spec.md, R7.11): arrays and objects
 * inside one another, the outermost counting as 1. Enforced by walking without recursion, so the
 * limit is this number and never the JavaScript stack's.
 */
export const MAX_NESTING = 64;

/**
 * Whether a value nests more than `limit` arrays and objects. Iterative, so safe on any depth; a
 * value handed over as objects may share or loop (no JSON text can): a loop is infinitely deep,
 * and a shared object is walked again only when reached deeper than before, at most `limit`
 * times, so shared subtrees cannot make the walk exponential.
 */
export function nestsTooDeep(value: unknown, limit = MAX_NESTING): boolean {
  if (value === null || typeof value !== 'object') return false;
  const deepest = new Map<object, number>();
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > limit) return true;
    if ((deepest.get(node) ?? 0) >= depth) continue;
    deepest.set(node, depth);
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

// `x` is a multiple of `m` when the double x / m (IEEE 754, rounded to nearest) is an integer
// (R7.12). ajv's own test, `q !== parseInt(q)`, reads 1e21 as 1 and disagrees past 10^21.
const multipleOf: CodeKeywordDefinition = {
  keyword: 'multipleOf',
  type: 'number',
  schemaType: 'number',
  error: {
    message: ({ schemaCode }: KeywordErrorCxt) => str`must be multiple of ${schemaCode}`,
    params: ({ schemaCode }: KeywordErrorCxt) => _`{multipleOf: ${schemaCode}}`,
  },
  code(cxt: KeywordCxt) {
    const { data, schemaCode } = cxt;
    cxt.fail(_`!Number.isInteger(${data} / ${schemaCode})`);
  },
};

// Every item compared with every other as JSON values (R14.6: numbers by value). ajv's own skips
// items whose type differs from the one `items` names, so `[[], []]` under `items: {type: string}`
// passed as unique.
const uniqueItems: FuncKeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  errors: false,
  validate: (unique: boolean, data: unknown[]) => !unique || new Set(data.map((item) => canonicalJson(item))).size === data.length,
};

/**
 * ajv's tuple check (`prefixItems`, draft-07 `items` as a list) declares each position's result
 * only when the array reaches that position, then gates the keywords after it on that result.
 * Where ajv stops at the first error (inside `not` and `if`), an array shorter than the tuple left
 * the result undefined and every later keyword (`contains`, …) unchecked: `not: {prefixItems:
 * [{const: null}], contains: {const: 1}}` refused `[]`. A position the array does not reach holds.
 */
function tupleWithDefinedResults(cxt: KeywordCxt, extraItems: string, schema: unknown[]): void {
  const ok = cxt.ok.bind(cxt);
  cxt.ok = (cond: Code | boolean) => {
    if (cond instanceof Name) cxt.gen.if(_`${cond} === undefined`, () => cxt.gen.assign(cond, true));
    ok(cond);
  };
  try {
    validateTuple(cxt, extraItems, schema as never);
  } finally {
    cxt.ok = ok;
  }
}

const prefixItems: CodeKeywordDefinition = {
  keyword: 'prefixItems',
  type: 'array',
  schemaType: ['array'],
  before: 'uniqueItems',
  code: (cxt) => tupleWithDefinedResults(cxt, 'items', cxt.schema as unknown[]),
};

const draft07Items: CodeKeywordDefinition = {
  keyword: 'items',
  type: 'array',
  schemaType: ['object', 'array', 'boolean'],
  before: 'uniqueItems',
  code(cxt) {
    const { schema, it } = cxt;
    if (Array.isArray(schema)) return tupleWithDefinedResults(cxt, 'additionalItems', schema);
    it.items = true;
    if (alwaysValidSchema(it, schema)) return;
    cxt.ok(validateArray(cxt));
  },
};

function configure<T extends AjvCore>(instance: T): T {
  instance.removeKeyword('multipleOf');
  instance.addKeyword(multipleOf);
  instance.removeKeyword('uniqueItems');
  instance.addKeyword(uniqueItems);
  for (const [name, validate] of Object.entries(ASSERTED_FORMATS)) instance.addFormat(name, { type: 'string', validate });
  return instance;
}

// Options both drafts share. `ownProperties`: a property named `toString` is looked up as an own
// member of the arguments, never on Object.prototype (R1.1). Patterns run on re2js (R7.14): no
// schema can stall the event loop. No logger: an unknown `format` is an annotation, not a warning.
// Formats other than ASSERTED_FORMATS are unknown to these instances, and `strict: false` lets
// them pass as annotations.
const OPTIONS = { allErrors: true, strict: false, allowUnionTypes: true, ownProperties: true, logger: false as const, code: { regExp: linearRegExp } };

// Made on first use: building an instance compiles meta-schemas (generated code), which a page
// under a strict Content-Security-Policy may not run, and an evaluate-only caller never needs it.
// Per draft, two instances the same but for checking each schema against its meta-schema: a
// schema the validators compiled ahead of time find valid (or that the server's judge has just
// checked) is compiled without ajv compiling a meta-schema first.
const instances = new Map<string, AjvCore>();
function dialectAjv(draft: '2020-12' | 'draft-07', validateSchema: boolean): AjvCore {
  const key = `${draft}/${validateSchema}`;
  let instance = instances.get(key);
  if (!instance) {
    // An instance that never checks a schema against its meta-schema never reads one: the
    // dialect refuses every `$ref` but a local pointer, so none can name a meta-schema either.
    // Not registering them saves a cold process the walk over every meta-schema's subschemas.
    const meta = validateSchema;
    if (draft === '2020-12') {
      const fresh = new Ajv2020({ ...OPTIONS, validateSchema, meta });
      // A draft-07 `$schema` in a nested schema still needs its meta-schema known.
      if (meta) fresh.addMetaSchema(draft07, undefined, false);
      fresh.removeKeyword('prefixItems');
      fresh.addKeyword(prefixItems);
      instance = configure(fresh);
    } else {
      // Draft-07 has its own `items` (a tuple when a list), `additionalItems` and `dependencies`.
      const fresh = new AjvDraft07({ ...OPTIONS, validateSchema, meta });
      fresh.removeKeyword('items');
      fresh.addKeyword(draft07Items);
      instance = configure(fresh);
    }
    instances.set(key, instance);
  }
  return instance;
}

// Compiled validators by schema text, so a new bundle version recompiles only what changed.
const validators = new Map<string, ValidateFunction>();
const byObject = new WeakMap<object, ValidateFunction>();
const MAX_VALIDATORS = 20_000;

/**
 * Compiles (once per distinct schema) a schema of the dialect docs/spec.md fixes: 2020-12, or
 * draft-07 when `$schema` names it. Throws when the schema is not valid, nests too deep or holds
 * what the dialect refuses.
 * `metaChecked`: its caller has just found it valid against its meta-schema, so ajv does not check it again.
 */
export function compileDialectSchema(schema: Record<string, unknown>, metaChecked = false): ValidateFunction {
  let fn = byObject.get(schema);
  if (fn) return fn;
  // Bundles are canonical JSON, so equal schemas parse with equal key order: JSON text is a fine key.
  const key = JSON.stringify(schema);
  fn = validators.get(key);
  if (!fn) {
    if (nestsTooDeep(schema)) throw new Error(`the schema nests deeper than ${MAX_NESTING} levels`);
    // What the dialect refuses is refused here too, wherever the schema came from (R14.2).
    const refused = schemaDialectProblems(schema, false)[0];
    if (refused) throw new Error(`${refused.pointer || '/'}: ${refused.message}`);
    const checked = metaChecked || metaSchemaValidator(schema)?.(schema) === true;
    const ajv = dialectAjv(readsAsDraft2020(schema) ? '2020-12' : 'draft-07', !checked);
    const own = structuredClone(schema);
    fn = ajv.compile(own);
    // The validator keeps what it needs. Left in ajv, the schema would be held for the life of the
    // process (ajv caches every schema it compiled, whatever this cache drops) and its root `$id`
    // would stay taken: another bundle's different schema of the same name would fail to compile.
    ajv.removeSchema(own);
    if (validators.size >= MAX_VALIDATORS) validators.clear();
    validators.set(key, fn);
  }
  byObject.set(schema, fn);
  return fn;
}
