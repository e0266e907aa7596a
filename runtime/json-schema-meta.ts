// The console also runs this in the browser: no node: modules here.
import type { ErrorObject } from 'ajv';
import * as generated from './json-schema-meta.gen.ts';

/** A standalone validator: true or false, with ajv's errors of the last call. */
export type MetaSchemaValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

const META_2020 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema';

/** Whether the schema is read as draft 2020-12 (`$schema` absent or naming it), the runtime ajv's own draft. */
export function readsAsDraft2020(schema: Record<string, unknown>): boolean {
  const name = schema.$schema;
  return name === undefined || name === META_2020 || name === `${META_2020}#`;
}

/**
 * The validator, compiled ahead of time, of the meta-schema ajv's validateSchema would check this
 * schema against: 2020-12 when `$schema` is absent or names it, draft-07 when it names that one
 * (ajv reads either with or without the trailing `#`). Undefined for any other `$schema`, which
 * ajv itself must judge (and refuse). Compiling a meta-schema with ajv costs a process over 100 ms
 * of generated code on first use; these are plain functions.
 */
export function metaSchemaValidator(schema: Record<string, unknown>): MetaSchemaValidator | undefined {
  const name = schema.$schema;
  if (readsAsDraft2020(schema)) return generated.meta2020 as unknown as MetaSchemaValidator;
  if (name === DRAFT_07 || name === `${DRAFT_07}#`) return generated.draft07 as unknown as MetaSchemaValidator;
  return undefined;
}
