import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { addSchemaFormats } from './formats.ts';
import * as generated from './validators.gen.ts';
import { escapePointer } from './pointer.ts';
import { SCHEMA_BASE, SCHEMA_OPTIONS, schemas, schemasHash } from './schema-files.ts';
import { memoizedLinearRegExp } from '../runtime/linear-regexp.ts';

export { SCHEMA_BASE, SCHEMA_OPTIONS, schemas } from './schema-files.ts';

/** The one shared ajv instance: every schema is added once at load, compiled lazily once per kind. */
export const ajv = new Ajv2020({ ...SCHEMA_OPTIONS, code: { regExp: memoizedLinearRegExp } });
addSchemaFormats(ajv as unknown as Ajv);
// Not checked against the meta-schema here: that compiled the 2020-12 meta-schema on every start
// for schemas that only change with the code. schemas.test.ts checks each one, and ajv's strict mode
// still refuses unknown keywords when a schema compiles.
for (const schema of Object.values(schemas)) ajv.addSchema(schema, undefined, undefined, false);

// The kinds a publish validates, compiled ahead of time (validators.gen.ts, by `npm run gen:types`),
// used only while they were generated from exactly these schemas: an edited schema is compiled by
// ajv until the file is generated again (schemas.test.ts fails meanwhile).
const precompiled: ReadonlyMap<string, ValidateFunction> =
  generated.SCHEMAS_HASH === schemasHash()
    ? new Map(Object.entries(generated.KINDS).map(([kind, name]) => [kind, (generated as unknown as Record<string, ValidateFunction>)[name]]))
    : new Map();

const compiled = new Map<string, ValidateFunction>();

/** The compiled validator for a kind or a `kind#/$defs/x` reference. */
export function validatorFor(ref: string): ValidateFunction {
  let fn = compiled.get(ref);
  if (!fn) {
    const fn2 = precompiled.get(ref) ?? ajv.getSchema(SCHEMA_BASE + (ref.includes('#') ? ref.replace('#', '.schema.json#') : `${ref}.schema.json`));
    if (!fn2) throw new Error(`no schema ${ref}`);
    fn = fn2;
    compiled.set(ref, fn);
  }
  return fn;
}

export type SchemaProblem = { pointer: string; message: string; code?: string };
export type Validation<T> = { ok: true; value: T } | { ok: false; errors: SchemaProblem[] };

/** Validates `data` (mutated in place: defaults are filled in) against a schema kind. */
export function validate<T>(ref: string, data: unknown, pointerPrefix = ''): Validation<T> {
  const fn = validatorFor(ref);
  if (fn(data)) return { ok: true, value: data as T };
  return { ok: false, errors: toProblems(fn.errors ?? [], pointerPrefix) };
}

/** Turns ajv errors into one problem per offending location, most specific first, without duplicates. */
export function toProblems(errors: ErrorObject[], pointerPrefix = ''): SchemaProblem[] {
  const seen = new Set<string>();
  const out: SchemaProblem[] = [];
  for (const e of errors) {
    // anyOf/oneOf summaries repeat what their branches already said.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if' || e.keyword === 'propertyNames') continue;
    let pointer = e.instancePath;
    // A property name that fails `propertyNames` is named by its own pointer, not its parent's.
    if (e.propertyName !== undefined) pointer = `${pointer}/${escapePointer(e.propertyName)}`;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      const prop = String((e.params as { additionalProperty: string }).additionalProperty);
      pointer = `${pointer}/${escapePointer(prop)}`;
      message = 'is not a known field';
    } else if (e.keyword === 'required') {
      const prop = String((e.params as { missingProperty: string }).missingProperty);
      pointer = `${pointer}/${escapePointer(prop)}`;
      message = 'is required';
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    } else if (e.keyword === 'pattern') {
      message = `does not match the allowed form ${(e.params as { pattern: string }).pattern}`;
    }
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ pointer: pointerPrefix + pointer, message, code: e.keyword });
  }
  return out;
}

export { escapePointer } from './pointer.ts';
