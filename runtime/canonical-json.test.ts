import { describe, expect, it } from 'vitest';
import canonicalize from 'canonicalize';
import { rng } from '../test/support/seeded-random.ts';
import { canonicalJson } from './canonical-json.ts';

describe('canonicalJson (RFC 8785)', () => {
  it('writes numbers and strings as RFC 8785 gives them', () => {
    // Numbers from RFC 8785 Appendix B; strings with the escapes §3.2.2.2 requires.
    expect(canonicalJson([1e21, 1e-7, 333333333.3333333, -0, 5e-324, 1.7976931348623157e308, 2 ** 53])).toBe(
      '[1e+21,1e-7,333333333.3333333,0,5e-324,1.7976931348623157e+308,9007199254740992]',
    );
    expect(canonicalJson(['\u0001\u001f', 'line\nbreak', 'quote"', 'back\\slash', '\u2028', '€'])).toBe(
      '["\\u0001\\u001f","line\\nbreak","quote\\"","back\\\\slash","\u2028","€"]',
    );
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
    expect(canonicalJson({ x: '\\ud800' })).toBe('{"x":"\\\\ud800"}');
    // The same object twice, side by side, is no cycle.
    const shared = { k: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"k":1},{"k":1}]');
  });
});

describe('canonicalJson agrees with the canonicalize package', () => {
  // Names and strings a fast path could get wrong: integer-like names (objects order those first),
  // `__proto__`, surrogate pairs and lone surrogates, escapes, and text that looks like an escape.
  const NAMES = ['a', 'B', '0', '7', '10', '01', '4294967295', '-1', '1.5', '__proto__', 'é', '\u{1F600}', '\ud800', '\\ud800', '', ' '];
  const STRINGS = ['', 'x', '\u0000\u001f', '"\\', '\u2028', '\u{1F600}', '\udc00', 'a\ud83d', '\\udc00', '€'];
  const NUMBERS = [0, -0, 1, -1.5, 1e21, 1e-7, 2 ** 53 + 2, Number.NaN, Number.POSITIVE_INFINITY, 5e-324];

  const valueOf = (r: ReturnType<typeof rng>, depth: number): unknown => {
    const roll = r.int(depth > 3 ? 5 : 8);
    if (roll === 0) return r.pick(STRINGS);
    if (roll === 1) return r.pick(NUMBERS);
    if (roll === 2) return r.pick([true, false, null]);
    if (roll === 3) return r.chance(0.05) ? undefined : r.pick(STRINGS);
    if (roll === 4) return r.int(1000);
    if (roll === 5) return Array.from({ length: r.int(4) }, () => valueOf(r, depth + 1));
    const out: Record<string, unknown> = {};
    for (const name of r.some(NAMES, 4))
      Object.defineProperty(out, name, { value: valueOf(r, depth + 1), enumerable: true, writable: true, configurable: true });
    return out;
  };
  const outcome = (f: () => string | undefined) => {
    try {
      return { text: f() };
    } catch (e) {
      return { threw: (e as Error).message.split(':')[0] };
    }
  };

  it('gives the same text, or refuses, on 3,000 random values', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const value = valueOf(rng(seed), 0);
      const reference = outcome(() => canonicalize(value));
      const ours = outcome(() => canonicalJson(value));
      if (reference.text === undefined && reference.threw === undefined) expect(ours.threw, `seed ${seed}`).toBe('value has no JSON form');
      else expect(ours, `seed ${seed}`).toEqual(reference);
    }
  });
});
