import { describe, expect, it } from 'vitest';
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
