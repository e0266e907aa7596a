import { describe, expect, it } from 'vitest';
import { globMatches } from './glob.ts';

describe('globMatches', () => {
  it('matches an exact id only to itself, case-sensitively', () => {
    expect(globMatches('core__read', 'core__read')).toBe(true);
    expect(globMatches('core__read', 'core__Read')).toBe(false);
    expect(globMatches('core__read', 'core__read_file')).toBe(false);
  });

  it('lets * match any run of characters, including none, anywhere', () => {
    expect(globMatches('core__*', 'core__')).toBe(true);
    expect(globMatches('mcp__github__get_*', 'mcp__github__get_issue')).toBe(true);
    expect(globMatches('mcp__github__get_*', 'mcp__github__list_issues')).toBe(false);
    expect(globMatches('*__read_*', 'host__read_file')).toBe(true);
    expect(globMatches('a*b*c', 'aXXbYYc')).toBe(true);
    expect(globMatches('a*b*c', 'aXXcYYb')).toBe(false);
    expect(globMatches('*', 'anything')).toBe(true);
  });

  it('treats regular expression characters in ids literally', () => {
    expect(globMatches('core__a-b', 'core__a-b')).toBe(true);
    expect(globMatches('core__a.b', 'core__aXb')).toBe(false);
  });
});
