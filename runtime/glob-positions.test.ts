import { describe, expect, it } from 'vitest';
import { globPositions } from './bundle-content.ts';
import { globMatcher } from './glob.ts';

// Loading a bundle matches each role's and grant's globs against only the run of sorted ids that
// can match; it must find exactly the ids globMatcher finds, in catalog order.
const byMatcher = (ids: readonly string[], globs: readonly string[]) => {
  const matchers = globs.map(globMatcher);
  return ids.flatMap((id, i) => (matchers.some((m) => m(id)) ? [i] : []));
};

function rng(seed: number) {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

describe('glob positions in a sorted catalog', () => {
  const ids = ['a', 'a_b', 'ab', 'core__read', 'core__read_0001', 'core__write', 'mcp__gh__get_issue', 'mcp__gh__list', 'mcp__jira__get_x', 'z__'];

  it.each([
    [['core__*'], [3, 4, 5]],
    [['core__read'], [3]],
    [['core__rea'], []],
    [['*'], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
    [['*__get_*'], [6, 8]],
    [
      ['mcp__*__get_*', 'a'],
      [0, 6, 8],
    ],
    [['a*a'], []],
    [['*_'], [9]],
    [['zz*'], []],
    [[], []],
  ])('%j matches positions %j', (globs, want) => {
    expect(globPositions(ids, globs)).toEqual(want);
    expect(globPositions(ids, globs)).toEqual(byMatcher(ids, globs));
  });

  it('agrees with globMatcher on random sorted catalogs and globs', () => {
    const rand = rng(7);
    const word = (max: number, alphabet: string) =>
      Array.from({ length: Math.floor(rand() * max) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
    for (let round = 0; round < 300; round++) {
      const catalog = [...new Set(Array.from({ length: 1 + Math.floor(rand() * 40) }, () => word(8, 'ab_c')))].sort();
      const globs = Array.from({ length: Math.floor(rand() * 4) }, () => word(6, 'ab_c**'));
      expect(globPositions(catalog, globs), JSON.stringify({ catalog, globs })).toEqual(byMatcher(catalog, globs));
    }
  });
});
