import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** The options of the server's ajv over these schemas (the validators compiled ahead of time use the same). */
// Patterns run on re2js (linear time), like the runtime's: no request body can stall the server.
export const SCHEMA_OPTIONS = {
  allErrors: true,
  strict: true,
  useDefaults: true,
  allowUnionTypes: true,
  discriminator: true,
} as const;

/** Hex SHA-256 of every schema as read above: what validators.gen.ts was generated from. */
export function schemasHash(): string {
  return createHash('sha256').update(JSON.stringify(schemas)).digest('hex');
}
