import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rng } from '../test/support/seeded-random.ts';
import { linearRegExp, memoizedLinearRegExp, simplePatternShape } from './linear-regexp.ts';

const SCHEMAS = join(import.meta.dirname, '../policy-schemas');

/** Every `pattern` of the server's own schemas. */
function schemaPatterns(): string[] {
  const found = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'pattern' && typeof x === 'string') found.add(x);
        else walk(x);
      }
    }
  };
  for (const f of readdirSync(SCHEMAS)) if (f.endsWith('.schema.json')) walk(JSON.parse(readFileSync(join(SCHEMAS, f), 'utf8')));
  return [...found];
}

const SIMPLE_EXTRAS = ['^a?b{2,3}c*$', '^[a-c]{0,4}x+$', '^(?:ab)?[b-d]+\\.$', '^\\$[x-z]+$', '^(v1)?[0-9]{2}$'];

describe('memoizedLinearRegExp on patterns both engines read alike', () => {
  const patterns = [...schemaPatterns(), ...SIMPLE_EXTRAS];

  it('takes the fast road for most of the server’s own patterns, never for nested or alternating ones', () => {
    expect(patterns.filter((p) => simplePatternShape(p) !== null).length).toBeGreaterThan(15);
    for (const p of ['^(a+)+$', '^(a|b)*$', '^a|b$', '^(?=a)a$', '^\\d+$', '^[^a]+$', '^a.b$', 'a+$', '^a+', '^a*?$', '^\\p{L}+$']) {
      expect(simplePatternShape(p), p).toBeNull();
    }
    expect(simplePatternShape('^[A-Za-z0-9_-]+__[A-Za-z0-9_-]+$')).toEqual({ unbounded: 2, choices: 1 });
  });

  it('answers as RE2 does, on 1,000 strings near each pattern', () => {
    let matched = 0;
    for (const p of patterns) {
      const alphabet = [...new Set([...p.replace(/[\\^$()[\]{}?*+|]/g, ''), 'a', 'Z', '0', '9', '_', '-', '.', ':', '*', '\n', ' ', 'é', '😀', '\ud800'])];
      const r = rng(p.length * 7919);
      const fast = memoizedLinearRegExp(p, 'u');
      const reference = linearRegExp(p, 'u');
      for (let k = 0; k < 1000; k++) {
        let s = '';
        const runs = r.int(6);
        for (let j = 0; j < runs; j++) s += r.pick(alphabet).repeat(r.chance(0.3) ? r.int(70) : r.int(4));
        if (r.chance(0.05)) s = s.repeat(30);
        const answer = reference.test(s);
        if (answer) matched++;
        expect(fast.test(s), `${p} on ${JSON.stringify(s)}`).toBe(answer);
      }
    }
    // Both answers are exercised, not only refusals.
    expect(matched).toBeGreaterThan(1000);
  });

  it('matches what it should: ids, hashes and an optional prefix', () => {
    const id = memoizedLinearRegExp('^[A-Za-z0-9_-]+__[A-Za-z0-9_-]+$', 'u');
    expect(id.test('mcp__github__get')).toBe(true);
    expect(id.test('__x')).toBe(false);
    expect(id.test(`${'_'.repeat(5000)}x`)).toBe(true);
    expect(id.test(`${'a'.repeat(5000)}!`)).toBe(false);
    const hash = memoizedLinearRegExp('^(sha256:)?[0-9a-f]{64}$', 'u');
    expect(hash.test('a'.repeat(64))).toBe(true);
    expect(hash.test(`sha256:${'0'.repeat(64)}`)).toBe(true);
    expect(hash.test(`sha256:${'0'.repeat(64)}\n`)).toBe(false);
  });
});
