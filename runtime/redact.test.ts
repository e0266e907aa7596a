import { describe, expect, it } from 'vitest';
import { type LoadedBundle, redactionTrie } from './load-bundle.ts';
import { redact } from './redact.ts';

const keep = (paths: string[], output: unknown) =>
  redact({ byId: new Map([['t__x', { redaction: redactionTrie(paths) }]]) } as unknown as LoadedBundle, 't__x', output);

describe('redact (R10)', () => {
  it('R10.3: a node kept by one path keeps its whole value, whatever another path keeps inside it', () => {
    const output = { a: [{ x: 1, y: 2 }, 5, [3]], b: { c: 1 } };
    expect(keep(['*', 'a[].x'], output)).toEqual(output);
    expect(keep(['a[].x', '*'], output)).toEqual(output);
    expect(keep(['a', 'a[].x'], output)).toEqual({ a: output.a });
  });

  it('R10.3: `*` and an exact name merge their subpaths', () => {
    const output = { a: { x: 1, y: 2, z: 3 }, b: { x: 4, y: 5 } };
    expect(keep(['*.x', 'a.y'], output)).toEqual({ a: { x: 1, y: 2 }, b: { x: 4 } });
  });

  it('R10.3: elements that keep nothing are dropped, an emptied object stays {}', () => {
    expect(keep(['a[].x'], { a: [{ x: 1 }, 5, { y: 2 }] })).toEqual({ a: [{ x: 1 }, {}] });
    expect(keep(['a.x'], { a: [{ x: 1 }] })).toEqual({});
    // An object walked by a `[]` step has no member the path continues with.
    expect(keep(['a[]'], { a: { x: 1 } })).toEqual({ a: {} });
  });

  it('R10.2: `$` is the whole output; `$.a` and `$[]` start at the root', () => {
    expect(keep(['$'], [1, { a: 2 }])).toEqual([1, { a: 2 }]);
    expect(keep(['$.a'], { a: 1, b: 2 })).toEqual({ a: 1 });
    expect(keep(['$[].id'], [{ id: 1, secret: 2 }])).toEqual([{ id: 1 }]);
  });

  it('R1.1: member names are data, `__proto__` and `toString` included', () => {
    const output = JSON.parse('{"__proto__": {"x": 1}, "toString": 2, "other": 3}');
    const kept = keep(['__proto__', 'toString'], output) as Record<string, unknown>;
    expect(Object.keys(kept)).toEqual(['__proto__', 'toString']);
    expect(JSON.stringify(kept)).toBe('{"__proto__":{"x":1},"toString":2}');
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
  });

  it('an unknown tool keeps nothing', () => {
    expect(redact({ byId: new Map() } as unknown as LoadedBundle, 'nope', { a: 1 })).toBeUndefined();
  });
  it('R10.3: a member reached under two different `*` siblings keeps only what its own path allows', () => {
    // `y` is reached under `a` (where `a.*.p` also applies) and under `b` (where it does not):
    // what `a.y` keeps must not carry over to `b.y`, whichever comes first.
    const paths = ['a.*.p', '*.y.k', '*.*.n'];
    const inner = { k: 1, p: 2, n: 3, z: 4 };
    expect(keep(paths, { a: { y: inner }, b: { y: inner } })).toEqual({ a: { y: { k: 1, p: 2, n: 3 } }, b: { y: { k: 1, n: 3 } } });
    expect(keep(paths, { b: { y: inner }, a: { y: inner } })).toEqual({ b: { y: { k: 1, n: 3 } }, a: { y: { k: 1, p: 2, n: 3 } } });
  });
});
