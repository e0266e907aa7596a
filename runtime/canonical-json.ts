import { createHash } from 'node:crypto';

/**
 * RFC 8785 canonical JSON text of a value (throws on values JSON cannot hold: NaN, Infinity, lone
 * surrogates, cycles, a top-level value with no JSON form).
 *
 * Written here rather than taken from the `canonicalize` package because it sits on the hot path
 * of every publish (a 2,000-tool bundle is a megabyte of it) and of every verification: this one
 * concatenates strings instead of building and joining arrays, and leaves string escaping and
 * number formatting to the engine's JSON.stringify, which RFC 8785 adopts as is (§3.2.2.2,
 * §3.2.2.3). The package stays the reference: a test checks both agree on generated values.
 */
export function canonicalJson(value: unknown): string {
  const text = write(value, new Set());
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

/** `sha256:<hex>` of the canonical JSON of a value. */
export function sha256Canonical(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}

// A string holding a surrogate that is not half of a pair has no UTF-8 form (RFC 8785 §3.2.2.2).
const LONE_SURROGATE = /\p{Surrogate}/u;

function string(s: string): string {
  if (LONE_SURROGATE.test(s)) throw new Error('Lone surrogate is not allowed');
  return JSON.stringify(s);
}

/** The member's text, or undefined for what JSON leaves out (undefined, functions, symbols). */
function write(value: unknown, open: Set<object>): string | undefined {
  switch (typeof value) {
    case 'string':
      return string(value);
    case 'number':
      if (Number.isNaN(value)) throw new Error('NaN is not allowed');
      if (!Number.isFinite(value)) throw new Error('Infinity is not allowed');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (open.has(value)) throw new Error('Circular reference detected');
  open.add(value);
  let out: string | undefined;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    out = write((value as { toJSON(): unknown }).toJSON(), open);
  } else if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += write(value[i], open) ?? 'null';
    }
    out += ']';
  } else {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object).sort();
    out = '{';
    let first = true;
    for (const key of keys) {
      const member = write(object[key], open);
      if (member === undefined) continue;
      out += first ? `${string(key)}:${member}` : `,${string(key)}:${member}`;
      first = false;
    }
    out += '}';
  }
  open.delete(value);
  return out;
}
