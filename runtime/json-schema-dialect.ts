// The console also runs this in the browser: no node: modules here.
import { _, type Ajv as AjvCore, type CodeKeywordDefinition, type KeywordCxt, str, type ValidateFunction } from 'ajv';
import type { KeywordErrorCxt } from 'ajv/dist/types/index.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv as AjvDraft07 } from 'ajv/dist/ajv.js';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
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

function configure<T extends AjvCore>(instance: T): T {
  instance.removeKeyword('multipleOf');
  instance.addKeyword(multipleOf);
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
    if (draft === '2020-12') {
      const fresh = new Ajv2020({ ...OPTIONS, validateSchema });
      // A draft-07 `$schema` in a nested schema still needs its meta-schema known.
      fresh.addMetaSchema(draft07, undefined, false);
      instance = configure(fresh);
    } else {
      // Draft-07 has its own `items` (a tuple when a list), `additionalItems` and `dependencies`.
      instance = configure(new AjvDraft07({ ...OPTIONS, validateSchema }));
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
