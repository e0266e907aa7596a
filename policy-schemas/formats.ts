// The string formats the schemas use: ajv-formats' full set, with `date-time` narrowed (below)
// to the grammar docs/spec.md R14.5 fixes for runtimes, so an instant the server accepts (a grant's
// expiry, a bundle's issuedAt) is one every runtime reads.
// One object serves both the ajv that compiles at run time and the validators compiled ahead of
// time (validators.gen.ts names it in its code), so the two cannot disagree.
import type { Ajv } from 'ajv';
import type { FormatDefinition } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { ASSERTED_FORMATS } from '../runtime/json-schema-formats.ts';

// ajv-formats ships CommonJS with a default export that tsx/ESM may wrap once more.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as typeof addFormatsModule;

const rfc3339 = fullFormats['date-time'] as { validate: (s: string) => boolean; compare?: (a: string, b: string) => number | undefined };

/**
 * RFC 3339 allows a leap second (23:59:60) that JavaScript dates cannot hold: every instant the
 * schemas accept must be one the server can turn into a Date and store, or it fails later (a 500).
 */
const dateTime: FormatDefinition<string> = {
  type: 'string',
  // RFC 3339 proper (`T`, never a space; no leap second), as R14.5 reads it, and a Date JavaScript can hold.
  validate: (s: string) => ASSERTED_FORMATS['date-time'](s) && rfc3339.validate(s) && Number.isFinite(Date.parse(s)),
  ...(rfc3339.compare ? { compare: rfc3339.compare } : {}),
};

export const schemaFormats = { ...fullFormats, 'date-time': dateTime };

/** Adds every format of schemaFormats to an ajv instance. */
export function addSchemaFormats(ajv: Ajv): void {
  addFormats(ajv);
  ajv.addFormat('date-time', dateTime);
}
