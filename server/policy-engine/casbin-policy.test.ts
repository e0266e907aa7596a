import { describe, expect, it } from 'vitest';
import { casbinPolicy, keyMatchPatterns } from './casbin-policy.ts';

const ids = ['core__read', 'core__read_file', 'core__write_file', 'mcp__gh__get_issue'];

describe('keyMatchPatterns', () => {
  it('keeps exact ids and trailing-star globs as they are', () => {
    expect(keyMatchPatterns('core__read', ids)).toEqual(['core__read']);
    expect(keyMatchPatterns('core__*', ids)).toEqual(['core__*']);
    expect(keyMatchPatterns('core__**', ids)).toEqual(['core__*']);
  });

  it('expands globs keyMatch cannot express against the catalog', () => {
    expect(keyMatchPatterns('*_file', ids)).toEqual(['core__read_file', 'core__write_file']);
    expect(keyMatchPatterns('core__*_*', ids)).toEqual(['core__read_file', 'core__write_file']);
    expect(keyMatchPatterns('*nothing*', ids)).toEqual([]);
  });
});

describe('casbinPolicy', () => {
  it('emits sorted, de-duplicated p and g rows in the tenant domain with prefixed roles', () => {
    const c = casbinPolicy({
      tenant: 'acme',
      roles: { b: { allow: ['core__*', 'core__*'], deny: ['*_file'] }, a: { allow: [], deny: [] } },
      bindings: { 'agent:x': ['b', 'a'] },
      toolIds: ids,
    });
    expect(c.policy).toEqual([
      ['g', 'agent:x', 'role:a', 'acme'],
      ['g', 'agent:x', 'role:b', 'acme'],
      ['p', 'role:b', 'acme', 'core__*', 'call', 'allow'],
      ['p', 'role:b', 'acme', 'core__read_file', 'call', 'deny'],
      ['p', 'role:b', 'acme', 'core__write_file', 'call', 'deny'],
    ]);
    expect(c.request).toEqual(['subject', 'tenant', 'toolId', 'call']);
  });
});
