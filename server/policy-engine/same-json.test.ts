import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { sameJson } from './diff.ts';

describe('sameJson', () => {
  it('agrees with comparing canonical JSON texts', () => {
    const values: unknown[] = [
      { id: 'core__a', groups: ['x', 'y'], inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
      { groups: ['x', 'y'], inputSchema: { properties: { q: { type: 'string' } }, type: 'object' }, id: 'core__a' },
      { id: 'core__a', groups: ['y', 'x'], inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
      { id: 'core__a', groups: ['x', 'y'], inputSchema: { type: 'object', properties: { q: { type: 'number' } } } },
      { id: 'core__a', groups: ['x', 'y'], inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, state: undefined },
      { id: 'core__a', groups: ['x', 'y'], inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, state: 'done' },
      { id: 'core__a', groups: { 0: 'x', 1: 'y' } },
      { id: 'core__a', groups: ['x', 'y'] },
      [1, null],
      [1, undefined],
      [1],
      0,
      -0,
      '0',
      null,
    ];
    for (const a of values)
      for (const b of values) expect(sameJson(a, b), `${canonicalJson(a)} vs ${canonicalJson(b)}`).toBe(canonicalJson(a) === canonicalJson(b));
  });
});
