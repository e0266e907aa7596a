import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.ts';

// A small deterministic generator of JSON values that stress RFC 8785: keys that sort differently
// by UTF-16 code units than by code points or as integers, escapes, astral characters, numbers
// whose shortest form uses an exponent, and nesting.
function generator(seed: number) {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const strings = [
    '',
    'a',
    'Zed',
    'alpha',
    '10',
    '9',
    '1',
    '€',
    '\u{1F600}',
    '\ufb33',
    'line\nbreak',
    'quote"',
    'back\\slash',
    '\u0001\u001f',
    '\u2028',
    'get_x',
    'getX',
  ];
  const numbers = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789012345680000, 5e-324, 1.7976931348623157e308, 333333333.3333333, -1.5e-10, 2 ** 53];
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 3 || r < 0.35) return pick<unknown>([...strings, ...numbers, true, false, null]);
    if (r < 0.6) return Array.from({ length: Math.floor(next() * 5) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 6); i > 0; i--) o[pick(strings) + (next() < 0.3 ? pick(strings) : '')] = value(depth + 1);
    return o;
  };
  return value;
}

describe('canonicalJson (RFC 8785)', () => {
  it('writes exactly what the canonicalize reference writes, on generated values', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const v = generator(seed)(0);
      expect(canonicalJson(v)).toBe(canonicalize(v));
    }
  });

  it('sorts members by UTF-16 code units, not as integers or by code point', () => {
    expect(canonicalJson({ 9: 0, 10: 0, '\ufb33': 0, '\u{1F600}': 0, a: { b: 1, A: [2, { d: null, c: true }] } })).toBe(
      '{"10":0,"9":0,"a":{"A":[2,{"c":true,"d":null}],"b":1},"\u{1F600}":0,"\ufb33":0}',
    );
  });

  it('leaves out undefined members, writes undefined array items as null, and follows toJSON', () => {
    expect(canonicalJson({ a: undefined, b: [undefined], c: new Date(0) })).toBe('{"b":[null],"c":"1970-01-01T00:00:00.000Z"}');
  });

  it('refuses what has no canonical form', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(/NaN/);
    expect(() => canonicalJson({ x: [Number.POSITIVE_INFINITY] })).toThrow(/Infinity/);
    expect(() => canonicalJson({ x: 'a\ud800b' })).toThrow(/surrogate/);
    expect(() => canonicalJson({ '\udc00': 1 })).toThrow(/surrogate/);
    const loop: Record<string, unknown> = {};
    loop.self = [loop];
    expect(() => canonicalJson(loop)).toThrow(/Circular/);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    // A backslash before the letters of an escape is no lone surrogate.
    expect(canonicalJson({ x: '\\ud800', y: '\\\\ud800' })).toBe(canonicalize({ x: '\\ud800', y: '\\\\ud800' }));
    // The same object twice, side by side, is no cycle.
    const shared = { k: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"k":1},{"k":1}]');
  });
});
