import { describe, expect, it } from 'vitest';
import { validatorFor } from '../../policy-schemas/index.ts';
import { hashedToolId, mappedName, placeToolIds, plainToolId } from './tool-ids.ts';

const isToolId = (id: string) => validatorFor('common#/$defs/toolId')(id);
const place = (names: Array<string | { name: string; heldBy: string }>, inventory: string[] = [], server = 'gh') =>
  placeToolIds(
    server,
    names.map((n) => (typeof n === 'string' ? { name: n } : n)),
    new Set(inventory),
  );
const ids = (placed: ReturnType<typeof place>) => Object.fromEntries(placed.map((p) => [p.name, p.id ?? `refused: ${'problem' in p ? p.problem : ''}`]));

describe('the MCP tool name to tool id mapping', () => {
  it('maps dots, slashes and every other character outside [A-Za-z0-9_-] to one underscore each', () => {
    expect(mappedName('github.create_issue')).toBe('github_create_issue');
    expect(mappedName('fs/read_file')).toBe('fs_read_file');
    expect(mappedName('keep-this_One9')).toBe('keep-this_One9');
    // One underscore per code point, astral ones included (not one per UTF-16 unit).
    expect(mappedName('café 😀')).toBe('caf___');
    expect(mappedName('工具.搜索')).toBe('_____');
  });

  it('imports real dotted and slashed names under their plain mapped ids', () => {
    expect(ids(place(['github.create_issue', 'fs/read_file', 'search']))).toEqual({
      'github.create_issue': 'mcp__gh__github_create_issue',
      'fs/read_file': 'mcp__gh__fs_read_file',
      search: 'mcp__gh__search',
    });
  });

  it('cuts a 128-character name to 64 characters ending in _ and 8 hex digits of the sha-256 of the name', () => {
    const name = `${'a.'.repeat(63)}zz`;
    expect(name).toHaveLength(128);
    const id = hashedToolId('gh', name);
    expect(id).toHaveLength(64);
    expect(id).toBe(`mcp__gh__${'a_'.repeat(23)}_0dad8cf5`);
    expect(plainToolId('gh', name)).toBeUndefined();
    expect(ids(place([name]))).toEqual({ [name]: id });
    expect(isToolId(id)).toBe(true);
  });

  it('uses the first 8 hex digits of the sha-256 of the original name, not of the mapped one', () => {
    expect(hashedToolId('gh', 'github.create_issue')).toBe('mcp__gh__github_create_issue_e877a647');
    expect(hashedToolId('gh', 'fs/read_file')).toBe('mcp__gh__fs_read_file_4a831e8f');
    expect(hashedToolId('gh', '工具.搜索')).toBe(`mcp__gh__${'_'.repeat(5)}_6caa7be7`);
    expect(hashedToolId('gh', 'a.b')).not.toBe(hashedToolId('gh', 'a/b'));
  });

  it('keeps a name that makes an id of exactly 64 characters plain, and suffixes one character more', () => {
    const fits = 'y'.repeat(64 - 'mcp__gh__'.length);
    expect(ids(place([fits]))).toEqual({ [fits]: `mcp__gh__${fits}` });
    const over = `${fits}y`;
    const id = place([over])[0].id!;
    expect(id).toHaveLength(64);
    expect(id).toBe(hashedToolId('gh', over));
  });

  it('suffixes both names when two meet after mapping, whatever order they are listed in', () => {
    const both = { 'a.b': 'mcp__gh__a_b_2e7336dc', 'a/b': 'mcp__gh__a_b_c14cddc0' };
    expect(ids(place(['a.b', 'a/b']))).toEqual(both);
    expect(ids(place(['a/b', 'a.b']))).toEqual(both);
    // A valid name meeting a mapped one is suffixed too: neither is preferred.
    expect(ids(place(['a_b', 'a.b']))).toEqual({ a_b: 'mcp__gh__a_b_648fa9b3', 'a.b': 'mcp__gh__a_b_2e7336dc' });
  });

  it('never renames a tool already imported when a name that would meet it appears later', () => {
    const later = place([{ name: 'a.b', heldBy: 'mcp__gh__a_b' }, 'a/b'], ['mcp__gh__a_b']);
    expect(ids(later)).toEqual({ 'a.b': 'mcp__gh__a_b', 'a/b': 'mcp__gh__a_b_c14cddc0' });
  });

  it('suffixes a new name whose plain id another tool of the inventory holds', () => {
    expect(ids(place(['taken'], ['mcp__gh__taken']))).toEqual({ taken: 'mcp__gh__taken_99341d56' });
  });

  it('refuses, never overwrites, when even the suffixed id is taken or spelled out by another name', () => {
    const hostile = 'a_b_2e7336dc';
    const r = place(['a.b', 'a/b', hostile]);
    expect(r.map((p) => p.id)).toEqual([undefined, 'mcp__gh__a_b_c14cddc0', undefined]);
    expect(r[0]).toMatchObject({ problem: expect.stringContaining('mcp__gh__a_b_2e7336dc would be shared') });
    const taken = place(['taken'], ['mcp__gh__taken', 'mcp__gh__taken_99341d56']);
    expect(taken[0]).toMatchObject({ problem: expect.stringContaining('already used') });
  });

  it('gives the same name the same suffix on every server, the longest server id included', () => {
    const server = 's'.repeat(40);
    const id = hashedToolId(server, 'github.create_issue');
    expect(id).toBe(`mcp__${server}__github_c_e877a647`);
    expect(id).toHaveLength(64);
    expect(isToolId(id)).toBe(true);
    expect(hashedToolId('other', 'github.create_issue').slice(-8)).toBe(id.slice(-8));
  });
});
