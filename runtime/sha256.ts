import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.ts';

/** Lowercase hex SHA-256 of a text's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** `sha256:<hex>` of the canonical JSON of a value. */
export function sha256Canonical(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}
