// What the validators compiled ahead of time (validators.gen.ts, runtime/json-schema-meta.gen.ts)
// call at run time: ajv's small runtime helpers and the project's own formats and pattern engine.
// ajv writes these as `require(...)` in generated code; the generator replaces each with a name
// from here, so the generated modules stay plain ESM in Node, tsx, esbuild and the browser.
import equalModule from 'ajv/dist/runtime/equal.js';
import ucs2lengthModule from 'ajv/dist/runtime/ucs2length.js';

// ajv's runtime helpers are CommonJS with a `default` export, which ESM loaders wrap differently.
const unwrap = <T>(m: T): T => ((m as { default?: T }).default ?? m) as T;

export const equal = unwrap(equalModule);
export const ucs2length = unwrap(ucs2lengthModule);
export { schemaFormats } from './formats.ts';
export { memoizedLinearRegExp } from '../runtime/linear-regexp.ts';
