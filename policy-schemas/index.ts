import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { escapePointer } from './pointer.ts';
import { linearRegExp } from '../runtime/linear-regexp.ts';

/** Base of every schema `$id`; `<base><kind>.schema.json`. */
export const SCHEMA_BASE = 'https://toolgate.dev/schemas/';

const here = dirname(fileURLToPath(import.meta.url));

/** Every schema in this folder, by kind (file name without `.schema.json`). */
export const schemas: Record<string, Record<string, unknown>> = Object.fromEntries(
  readdirSync(here)
    .filter((f) => f.endsWith('.schema.json'))
    .sort()
    .map((f) => [f.replace(/\.schema\.json$/, ''), JSON.parse(readFileSync(join(here, f), 'utf8')) as Record<string, unknown>]),
);

// ajv-formats ships CommonJS with a default export that tsx/ESM may wrap once more.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as typeof addFormatsModule;

/** The one shared ajv instance: every schema is added once at load, compiled lazily once per kind. */
// Patterns run on re2js (linear time), like the runtime's: no request body can stall the server.
export const ajv = new Ajv2020({
  allErrors: true,
  strict: true,
  useDefaults: true,
  allowUnionTypes: true,
  discriminator: true,
  code: { regExp: linearRegExp },
});
addFormats(ajv);
// RFC 3339 allows a leap second (23:59:60) that JavaScript dates cannot hold: every instant the
// schemas accept must be one the server can turn into a Date and store, or it fails later (a 500).
const rfc3339 = ajv.formats['date-time'] as { validate: (s: string) => boolean; compare?: (a: string, b: string) => number | undefined };
ajv.addFormat('date-time', {
  type: 'string',
  validate: (s: string) => rfc3339.validate(s) && Number.isFinite(Date.parse(s)),
  ...(rfc3339.compare ? { compare: rfc3339.compare } : {}),
});
// Not checked against the meta-schema here: that compiled the 2020-12 meta-schema on every start
// for schemas that only change with the code. schemas.test.ts checks each one, and ajv's strict mode
// still refuses unknown keywords when a schema compiles.
for (const schema of Object.values(schemas)) ajv.addSchema(schema, undefined, undefined, false);

const compiled = new Map<string, ValidateFunction>();

/** The compiled validator for a kind or a `kind#/$defs/x` reference. */
export function validatorFor(ref: string): ValidateFunction {
  let fn = compiled.get(ref);
  if (!fn) {
    const fn2 = ajv.getSchema(SCHEMA_BASE + (ref.includes('#') ? ref.replace('#', '.schema.json#') : `${ref}.schema.json`));
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
