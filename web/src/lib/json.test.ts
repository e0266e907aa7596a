import { describe, expect, it } from 'vitest';
import { applyMergePatch, createMergePatch, diffJson, jsonSyntaxError, lineOfPointer, pointerLines } from './json.ts';

describe('pointerLines', () => {
  const text = JSON.stringify({ type: 'object', properties: { query: { type: 'string' }, 'a/b': { type: 'number' } }, required: ['query'] }, null, 2);

  it('finds the line of a nested property value', () => {
    const lines = pointerLines(text);
    expect(text.split('\n')[lines.get('/properties/query')! - 1]).toContain('"query"');
    expect(text.split('\n')[lines.get('/required/0')! - 1]).toContain('"query"');
  });

  it('escapes slashes in keys as RFC 6901 does', () => {
    const lines = pointerLines(text);
    expect(text.split('\n')[lines.get('/properties/a~1b')! - 1]).toContain('"a/b"');
  });

  it('falls back to the nearest existing ancestor for a pointer below the text', () => {
    const lines = pointerLines(text);
    expect(lineOfPointer(lines, '/properties/query/format')).toBe(lines.get('/properties/query'));
  });
});

describe('jsonSyntaxError', () => {
  it('reports the line where a JSON text breaks', () => {
    expect(jsonSyntaxError('{\n  "a": 1,\n  "b": \n}')).toEqual({ line: 4, message: 'Unexpected "}"' });
    expect(jsonSyntaxError('{\n  "a": 1\n  "b": 2\n}')?.line).toBe(3);
    expect(jsonSyntaxError('{"a": [1, 2,]}')?.line).toBe(1);
  });

  it('accepts what JSON.parse accepts', () => {
    for (const ok of ['{}', '[]', '"x"', '-1.5e3', 'true', 'null', '{"a": {"b": ["\\u00e9", false]}}', ' { "a" : 1 } ']) {
      expect(JSON.parse(ok)).toBeDefined();
      expect(jsonSyntaxError(ok)).toBeNull();
    }
  });
});

describe('merge patches', () => {
  it('re-applies an edit onto an entity someone else changed meanwhile', () => {
    const base = { ttl: 3600, roles: { a: { allow: ['x'] } }, budgets: { maxRuntimeMs: 5 } };
    const mine = { ttl: 3600, roles: { a: { allow: ['x', 'y'] } } };
    const theirs = { ttl: 7200, roles: { a: { allow: ['x'] } }, budgets: { maxRuntimeMs: 5 } };
    const merged = applyMergePatch(theirs, createMergePatch(base, mine));
    expect(merged).toEqual({ ttl: 7200, roles: { a: { allow: ['x', 'y'] } } });
  });
});

describe('diffJson', () => {
  it('lists added, removed and changed leaves with their pointers', () => {
    expect(diffJson({ a: 1, b: { c: 2 }, d: 3 }, { a: 1, b: { c: 4 }, e: 5 })).toEqual([
      { path: '/b/c', kind: 'changed', before: 2, after: 4 },
      { path: '/d', kind: 'removed', before: 3 },
      { path: '/e', kind: 'added', after: 5 },
    ]);
  });

  it('treats a creation (null before) as one added value', () => {
    expect(diffJson(null, { a: 1 })).toEqual([{ path: '/', kind: 'added', after: { a: 1 } }]);
  });
});
