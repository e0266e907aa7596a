import canonicalizeJson from 'canonicalize';
import { createHash } from 'node:crypto';

/** RFC 8785 canonical JSON text of a value (throws on values JSON cannot hold). */
export function canonicalJson(value: unknown): string {
  const text = canonicalizeJson(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

/** `sha256:<hex>` of the canonical JSON of a value. */
export function sha256Canonical(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}
