import { describe, expect, it } from 'vitest';
import { globMatches } from './glob.ts';

// The reference: what a regular expression says, for inputs small enough to be safe.
const byRegExp = (glob: string, id: string) =>
  new RegExp(
    `^${glob
      .split('*')
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  ).test(id);

describe('glob matching', () => {
  it.each([
    ['core__*', 'core__read', true],
    ['core__*', 'mcp__x', false],
    ['*', '', true],
    ['*__get_*', 'mcp__github__get_issue', true],
    ['mcp__*__get_*', 'mcp__github__list', false],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['core__host_*', 'core__host_', true],
    ['exact__id', 'exact__id', true],
    ['exact__id', 'exact__idx', false],
  ])('%s against %s is %s', (glob, id, want) => {
    expect(globMatches(glob, id)).toBe(want);
  });

  it('agrees with a regular expression on random globs and ids', () => {
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    const alphabet = 'ab_*';
    for (let i = 0; i < 20_000; i++) {
      const glob = Array.from({ length: rand(7) }, () => alphabet[rand(4)]).join('');
      const id = Array.from({ length: rand(8) }, () => 'ab_'[rand(3)]).join('');
      expect(globMatches(glob, id), `${glob} ~ ${id}`).toBe(byRegExp(glob, id));
    }
  });

  it('answers a glob full of stars against a long near-miss at once', () => {
    const glob = `c${'*'.repeat(40)}Z`;
    const id = `c${'x'.repeat(60)}`;
    expect(globMatches(glob, id)).toBe(false);
  });
});
