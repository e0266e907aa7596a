// The console also runs this in the browser: no node: modules here.
import { escapePointer, unescapePointer } from '../policy-schemas/pointer.ts';
import { compileLinearPattern } from './linear-regexp.ts';

/** A problem of a schema, at a JSON pointer relative to the schema's root. */
export type SchemaProblem = { pointer: string; message: string; code: 'input_schema' | 'connection_id' };

// Where the target depends on the evaluation path, not on the schema text: outside the dialect.
const DYNAMIC = new Set(['$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor']);

// Where a subschema can stand, by the 2020-12 vocabulary (plus draft-07's, which MCP servers often
// declare). Everything else is data (enum, const, examples, default, unknown keywords…) and is
// never walked as a schema, whatever its key is called.
export const ONE_SCHEMA = new Set([
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'items',
  'additionalItems',
  'unevaluatedItems',
  'contains',
  'contentSchema',
  'not',
  'if',
  'then',
  'else',
]);
export const SCHEMA_MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
export const SCHEMA_LIST = new Set(['prefixItems', 'allOf', 'anyOf', 'oneOf']);

/**
 * What the dialect refuses in a schema (docs/spec.md R14.2), found by walking the vocabulary:
 * `$dynamicRef`/`$recursiveRef` and their anchors, `$anchor`, a nested `$id` or one with a
 * fragment, a `pattern` or `patternProperties` name outside RE2, and a `$ref` that is not `#` or
 * `#/<pointer>` to a place a subschema stands. `noConnectionId` adds an input schema's own rule:
 * no property named `connectionId` at any depth. Pointers are relative to the root, sorted.
 * Both the server's judge and the runtime's compiler ask it, so a hand-signed bundle cannot bring
 * in what an admin could not save.
 */
export function schemaDialectProblems(root: Record<string, unknown>, noConnectionId: boolean): SchemaProblem[] {
  const walk = walkSchema(root, noConnectionId);
  const problems = [...walk.problems];
  for (const r of walk.refs) {
    const problem = refProblem(r.value, walk.subschemas);
    if (problem) problems.push({ pointer: r.pointer, message: problem, code: 'input_schema' });
  }
  return problems;
}

type Walk = { problems: SchemaProblem[]; refs: { pointer: string; value: string }[]; subschemas: Set<string> };

// Patterns repeat across a catalog's schemas (ids, dates, codes), and compiling one costs re2js
// a fraction of a millisecond: each is judged once. Bounded like the runtime's other caches.
const patternVerdicts = new Map<string, string | null>();
const MAX_PATTERN_VERDICTS = 10_000;

function linearPatternProblem(pattern: string): string | undefined {
  let verdict = patternVerdicts.get(pattern);
  if (verdict === undefined) {
    try {
      compileLinearPattern(pattern);
      verdict = null;
    } catch (e) {
      verdict = `cannot run in linear time (RE2 syntax, no lookaround or backreferences): ${(e as Error).message}`;
    }
    if (patternVerdicts.size >= MAX_PATTERN_VERDICTS) patternVerdicts.clear();
    patternVerdicts.set(pattern, verdict);
  }
  return verdict ?? undefined;
}

/** Visits every subschema (pointers relative to the root, "" for the root itself). */
function walkSchema(root: Record<string, unknown>, noConnectionId: boolean): Walk {
  const out: Walk = { problems: [], refs: [], subschemas: new Set() };
  const stack: { node: unknown; pointer: string }[] = [{ node: root, pointer: '' }];
  while (stack.length) {
    const { node, pointer } = stack.pop()!;
    out.subschemas.add(pointer);
    // Booleans are schemas too; anything else where a schema must stand is the meta-schema's to refuse.
    if (node === null || typeof node !== 'object' || Array.isArray(node)) continue;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      const here = `${pointer}/${escapePointer(key)}`;
      const problem = (message: string, code: SchemaProblem['code'] = 'input_schema') => out.problems.push({ pointer: here, message, code });
      if (DYNAMIC.has(key)) {
        problem(`\`${key}\` is not allowed in schemas: only \`$ref\` to a JSON pointer in the same schema`);
        continue;
      }
      if (key === '$anchor') {
        problem('anchors are not allowed in schemas: `$ref` names a JSON pointer ("#/...")');
        continue;
      }
      if (key === '$id' && pointer !== '') {
        problem('"$id" is allowed only at the root: a nested one changes what "#/…" references mean');
        continue;
      }
      if (key === '$id' && typeof value === 'string' && value.includes('#') && !value.endsWith('#')) {
        // Draft-07 spells an anchor as an `$id` fragment.
        problem('"$id" may not carry a fragment: anchors are not allowed in schemas');
        continue;
      }
      if (key === 'pattern' && typeof value === 'string') {
        const why = linearPatternProblem(value);
        if (why) problem(why);
        continue;
      }
      if (key === '$ref') {
        if (typeof value === 'string') out.refs.push({ pointer: here, value });
        else problem('must be a string');
        continue;
      }
      const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
      if (ONE_SCHEMA.has(key)) {
        // draft-07 `items` may be a list of schemas (a tuple).
        if (Array.isArray(value)) value.forEach((sub, i) => stack.push({ node: sub, pointer: `${here}/${i}` }));
        else stack.push({ node: value, pointer: here });
      } else if (SCHEMA_LIST.has(key) && Array.isArray(value)) {
        value.forEach((sub, i) => stack.push({ node: sub, pointer: `${here}/${i}` }));
      } else if ((SCHEMA_MAP.has(key) || key === 'dependencies') && isObject) {
        for (const [name, sub] of Object.entries(value as Record<string, unknown>)) {
          const at = `${here}/${escapePointer(name)}`;
          if (key === 'patternProperties') {
            // The member name is a pattern, held to the same dialect as `pattern`.
            const why = linearPatternProblem(name);
            if (why) out.problems.push({ pointer: at, message: why, code: 'input_schema' });
          }
          if (noConnectionId && key === 'properties' && name === 'connectionId') {
            out.problems.push({ pointer: at, message: 'connectionId must not be an argument: connections travel out of band', code: 'connection_id' });
          }
          // draft-07 `dependencies` maps to a schema or to a list of property names (data).
          if (key === 'dependencies' && Array.isArray(sub)) continue;
          stack.push({ node: sub, pointer: at });
        }
      }
    }
  }
  out.problems.sort((a, b) => (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : 0));
  return out;
}

/**
 * Why a `$ref` is outside the subset: it must be `#` or `#/<JSON pointer>` naming a place the walk
 * found a subschema at. A pointer into data (`#/properties/a/enum/0`, an unknown keyword) would make
 * ajv compile text the walk never judged.
 */
function refProblem(ref: string, subschemas: Set<string>): string | undefined {
  if (!ref.startsWith('#')) return 'only local references ("#/...") are allowed';
  const fragment = ref.slice(1);
  if (fragment !== '' && !fragment.startsWith('/')) return 'must be a JSON pointer ("#/..."); anchors are outside the subset';
  let target: string;
  try {
    target = fragment
      .split('/')
      .map((part, i) => (i === 0 ? part : escapePointer(unescapePointer(decodeURIComponent(part)))))
      .join('/');
  } catch {
    return 'is not a valid URI fragment';
  }
  if (!subschemas.has(target)) return `points at ${target || 'the root'}, where no subschema stands`;
  return undefined;
}
