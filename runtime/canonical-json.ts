// The console also runs this in the browser: no node: modules here.
import canonicalizeJson from 'canonicalize';

/**
 * RFC 8785 canonical JSON text of a value, by the `canonicalize` package (throws on values JSON
 * cannot hold: NaN, Infinity, lone surrogates, cycles, a top-level value with no JSON form).
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalizeJson(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}
