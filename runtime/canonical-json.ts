import canonicalizeJson from 'canonicalize';

/** RFC 8785 canonical JSON text of a value (throws on values JSON cannot hold). */
export function canonicalJson(value: unknown): string {
  const text = canonicalizeJson(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}
