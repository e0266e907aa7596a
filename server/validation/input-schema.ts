import { Ajv2020 } from 'ajv/dist/2020.js';
import draft07MetaSchema from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
// No node: imports here (directly or through what is imported): the console runs subsetProblems as you type.
import { escapePointer } from '../../policy-schemas/pointer.ts';
import { compileInputSchema } from '../../runtime/load-bundle.ts';
import type { ProblemDetail } from '../errors.ts';

const FORBIDDEN = ['oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else', 'patternProperties'] as const;
// Keywords whose values are data, not subschemas: never walked.
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example', 'description', 'title', 'required']);

// A separate ajv, only to check that an input schema is itself a valid JSON Schema. Made on first
// use, so the console can load this module's rules without running generated code (its CSP forbids it).
let metaAjvInstance: Ajv2020 | undefined;
function metaAjv(): Ajv2020 {
  if (!metaAjvInstance) {
    const fresh = new Ajv2020({ strict: false, validateFormats: false });
    // MCP servers built with zod commonly declare draft-07; without its meta-schema validateSchema throws.
    fresh.addMetaSchema(draft07MetaSchema);
    metaAjvInstance = fresh;
  }
  return metaAjvInstance;
}

/**
 * Checks an input schema against DESIGN's restricted subset: an object schema, without
 * combinators, conditionals, patternProperties, non-local $ref, or a `connectionId` property.
 * Returns every problem, each with the JSON pointer of where it sits.
 */
export function checkInputSchema(schema: unknown, pointer = '/inputSchema'): ProblemDetail[] {
  const problems: ProblemDetail[] = [];
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    return [{ pointer, message: 'must be a JSON Schema object', code: 'input_schema' }];
  }
  const root = schema as Record<string, unknown>;
  problems.push(...subsetProblems(root, pointer));
  let valid: boolean;
  try {
    valid = metaAjv().validateSchema(schema) as boolean;
  } catch (e) {
    return [...problems, { pointer: `${pointer}/$schema`, message: `names a meta-schema that is not supported: ${(e as Error).message}`, code: 'input_schema' }];
  }
  if (!valid) {
    for (const e of metaAjv().errors ?? []) {
      problems.push({ pointer: pointer + e.instancePath, message: `is not valid JSON Schema: ${e.message}`, code: 'input_schema' });
    }
  }
  if (problems.length === 0) {
    // Valid by the meta-schema is not enough (a bad regex, a dangling local $ref): it must compile in
    // the runtime's own ajv, or every bundle naming the tool would fail to compile.
    try {
      compileInputSchema(root);
    } catch (e) {
      problems.push({ pointer, message: `does not compile: ${(e as Error).message}`, code: 'input_schema' });
    }
  }
  return problems;
}

/**
 * The restricted-subset rules alone (no meta-schema check, no compilation): what the console
 * re-checks on every keystroke, with the very messages the server answers.
 */
export function subsetProblems(schema: Record<string, unknown>, pointer = ''): ProblemDetail[] {
  const problems: ProblemDetail[] = [];
  if (schema.type !== 'object') problems.push({ pointer: `${pointer}/type`, message: 'must be "object": tool arguments are an object', code: 'input_schema' });
  walk(schema, pointer, problems);
  return problems;
}

function walk(node: unknown, pointer: string, problems: ProblemDetail[]): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => walk(item, `${pointer}/${i}`, problems));
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    const here = `${pointer}/${escapePointer(key)}`;
    if ((FORBIDDEN as readonly string[]).includes(key)) {
      problems.push({ pointer: here, message: `\`${key}\` is not allowed in input schemas`, code: 'input_schema' });
      continue;
    }
    if ((key === '$ref' || key === '$dynamicRef' || key === '$recursiveRef') && (typeof value !== 'string' || !value.startsWith('#'))) {
      problems.push({ pointer: here, message: 'only local references ("#/...") are allowed', code: 'input_schema' });
      continue;
    }
    if (DATA_KEYWORDS.has(key)) continue;
    if ((key === 'properties' || key === 'dependentSchemas') && value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [prop, sub] of Object.entries(value as Record<string, unknown>)) {
        const propPointer = `${here}/${escapePointer(prop)}`;
        if (key === 'properties' && prop === 'connectionId') {
          problems.push({ pointer: propPointer, message: 'connectionId must not be an argument: connections travel out of band', code: 'connection_id' });
        }
        walk(sub, propPointer, problems);
      }
      continue;
    }
    walk(value, here, problems);
  }
}
