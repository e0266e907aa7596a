import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { definitionHash } from '../../runtime/definition-hash.ts';
import type { Tool } from '../../policy-schemas/types.gen.ts';
import { checkInputSchema } from '../validation/input-schema.ts';
import type { OfferedTool } from './client.ts';
import { reconcileTools } from './reconcile.ts';

const NOW = '2026-01-02T03:04:05.000Z';
const LATER = '2026-02-02T03:04:05.000Z';
/** The first 8 hex digits of the sha-256 of a name's UTF-8 bytes, computed here apart from the code under test. */
const sha8 = (name: string) => createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 8);
const obj = (props: Record<string, unknown> = {}) => ({ type: 'object', properties: props });

function offer(name: string, extra: Partial<OfferedTool> = {}): OfferedTool {
  return { name, description: `${name} does things`, inputSchema: obj({ q: { type: 'string' } }), ...extra };
}

function run(offered: OfferedTool[], existing: Tool[] = [], now = NOW) {
  return reconcileTools({ serverId: 'srv', offered, existing, now, checkInputSchema: (s) => checkInputSchema(s) });
}

/** Imports, then approves every tool as an admin would. */
function approvedInventory(offered: OfferedTool[]): Tool[] {
  return run(offered).changes.map(({ after }) => {
    const { review: _r, ...rest } = after;
    return { ...rest, status: 'active', source: { ...rest.source!, approvedDefinitionHash: rest.definitionHash } };
  });
}

describe('reconcileTools', () => {
  it('imports a new tool quarantined under mcp__<server>__<tool> with its definition and hash', () => {
    const r = run([offer('search')]);
    expect(r.added).toEqual(['mcp__srv__search']);
    const tool = r.changes[0].after;
    expect(r.changes[0].before).toBeNull();
    expect(tool).toMatchObject({
      id: 'mcp__srv__search',
      status: 'quarantined',
      description: 'search does things',
      inputSchema: obj({ q: { type: 'string' } }),
      effect: 'external_side_effect',
      groups: ['default'],
      source: { kind: 'mcp', server: 'srv', originalName: 'search' },
    });
    expect(tool.redaction).toBeUndefined();
    const hash = definitionHash({ name: 'search', description: 'search does things', inputSchema: obj({ q: { type: 'string' } }) });
    expect(tool.definitionHash).toBe(hash);
    expect(tool.review).toEqual({
      current: { name: 'search', description: 'search does things', inputSchema: obj({ q: { type: 'string' } }), definitionHash: hash },
      detectedAt: NOW,
    });
    expect(tool.source?.approvedDefinitionHash).toBeUndefined();
  });

  it('imports every tool as external_side_effect whatever its annotations claim, keeping them as hints', () => {
    const r = run([
      offer('a', { annotations: { readOnlyHint: true } }),
      offer('b', { annotations: { readOnlyHint: false, destructiveHint: true } }),
      offer('c'),
    ]);
    expect(r.changes.map((c) => c.after.effect)).toEqual(['external_side_effect', 'external_side_effect', 'external_side_effect']);
    expect(r.changes.map((c) => c.after.source?.hints)).toEqual([{ readOnlyHint: true }, { readOnlyHint: false, destructiveHint: true }, undefined]);
  });

  it('keeps the output schema in the definition and its hash', () => {
    const out = obj({ n: { type: 'number' } });
    const tool = run([offer('sum', { outputSchema: out })]).changes[0].after;
    expect(tool.outputSchema).toEqual(out);
    expect(tool.definitionHash).toBe(
      definitionHash({ name: 'sum', description: 'sum does things', inputSchema: obj({ q: { type: 'string' } }), outputSchema: out }),
    );
  });

  it('leaves an approved, unchanged tool untouched, admin edits included', () => {
    const [approved] = approvedInventory([offer('search')]);
    const edited: Tool = { ...approved, groups: ['knowledge'], effect: 'read_only', redaction: { allow: ['title'] } };
    const r = run([offer('search')], [edited], LATER);
    expect(r.changes).toEqual([]);
    expect(r.added).toEqual([]);
    expect(r.changed).toEqual([]);
    expect(r.removed).toEqual([]);
  });

  it('sends an approved tool whose definition changed back to quarantine with both definitions', () => {
    const [approved] = approvedInventory([offer('search')]);
    const edited: Tool = { ...approved, groups: ['knowledge'], redaction: { allow: ['title'] } };
    const newSchema = obj({ q: { type: 'string' }, limit: { type: 'integer' } });
    const r = run([offer('search', { inputSchema: newSchema })], [edited], LATER);
    expect(r.changed).toEqual(['mcp__srv__search']);
    const { before, after } = r.changes[0];
    expect(before).toBe(edited);
    expect(after.status).toBe('quarantined');
    expect(after.inputSchema).toEqual(newSchema);
    expect(after.groups).toEqual(['knowledge']);
    expect(after.redaction).toEqual({ allow: ['title'] });
    expect(after.source?.approvedDefinitionHash).toBe(approved.definitionHash);
    expect(after.definitionHash).not.toBe(approved.definitionHash);
    expect(after.review?.previous).toMatchObject({ name: 'search', inputSchema: approved.inputSchema, definitionHash: approved.definitionHash });
    expect(after.review?.current).toMatchObject({ name: 'search', inputSchema: newSchema, definitionHash: after.definitionHash });
    expect(after.review?.detectedAt).toBe(LATER);
  });

  it('treats a changed description as drift too', () => {
    const [approved] = approvedInventory([offer('search')]);
    const r = run([offer('search', { description: 'now also deletes files' })], [approved]);
    expect(r.changed).toEqual(['mcp__srv__search']);
    expect(r.changes[0].after.description).toBe('now also deletes files');
  });

  it('keeps the approved definition as previous when a quarantined tool drifts again', () => {
    const [approved] = approvedInventory([offer('search')]);
    const once = run([offer('search', { description: 'v2' })], [approved]).changes[0].after;
    const twice = run([offer('search', { description: 'v3' })], [once], LATER);
    expect(twice.changed).toEqual(['mcp__srv__search']);
    expect(twice.changes[0].after.review?.previous?.definitionHash).toBe(approved.definitionHash);
    expect(twice.changes[0].after.review?.current.description).toBe('v3');
  });

  it('does not rewrite a quarantined tool that is offered unchanged', () => {
    const first = run([offer('search')]).changes[0].after;
    expect(run([offer('search')], [first], LATER).changes).toEqual([]);
  });

  it('marks a vanished tool removed and keeps everything else about it', () => {
    const inventory = approvedInventory([offer('a'), offer('b')]);
    const r = run([offer('a')], inventory);
    expect(r.removed).toEqual(['mcp__srv__b']);
    expect(r.changes).toHaveLength(1);
    expect(r.changes[0].after).toEqual({ ...inventory[1], status: 'removed' });
    expect(run([offer('a')], [inventory[0], r.changes[0].after]).changes).toEqual([]);
  });

  it('quarantines a removed tool that comes back, even with its approved definition', () => {
    const [approved] = approvedInventory([offer('a')]);
    const back = run([offer('a')], [{ ...approved, status: 'removed' }]);
    expect(back.added).toEqual(['mcp__srv__a']);
    expect(back.changes[0].after.status).toBe('quarantined');
    expect(back.changes[0].after.review?.previous?.definitionHash).toBe(approved.definitionHash);
  });

  it('imports names outside the id characters under their mapped ids, the original name kept in source', () => {
    const long = `${'very.long/'.repeat(12)}12345678`;
    expect(long).toHaveLength(128);
    const r = run([offer('github.create_issue'), offer('fs/read_file'), offer('has space'), offer(long), offer('trailing_'), offer('ok')]);
    expect(r.rejected).toEqual([]);
    expect(r.added).toEqual([
      'mcp__srv__github_create_issue',
      'mcp__srv__fs_read_file',
      'mcp__srv__has_space',
      `mcp__srv__${'very_long_'.repeat(4)}very__${sha8(long)}`,
      'mcp__srv__trailing_',
      'mcp__srv__ok',
    ]);
    expect(r.changes.map((c) => c.after.source?.originalName)).toEqual(['github.create_issue', 'fs/read_file', 'has space', long, 'trailing_', 'ok']);
    // The definition (and its hash, which the gateway checks upstream) names the tool as the server does.
    expect(r.changes[0].after.review?.current.name).toBe('github.create_issue');
    expect(r.changes[0].after.definitionHash).toBe(
      definitionHash({ name: 'github.create_issue', description: 'github.create_issue does things', inputSchema: obj({ q: { type: 'string' } }) }),
    );
  });

  it('imports unicode names, one underscore per character, suffixed when they meet', () => {
    const r = run([offer('recherche_données'), offer('recherche_donn😀es'), offer('検索')]);
    expect(r.rejected).toEqual([]);
    expect(r.added).toEqual([
      `mcp__srv__recherche_donn_es_${sha8('recherche_données')}`,
      `mcp__srv__recherche_donn_es_${sha8('recherche_donn😀es')}`,
      'mcp__srv____',
    ]);
  });

  it('refuses a name longer than the inventory keeps (256 characters) and an empty one, importing the rest', () => {
    const r = run([offer('n'.repeat(257)), offer(''), offer('fine.name')]);
    expect(r.added).toEqual(['mcp__srv__fine_name']);
    expect(r.rejected).toEqual([
      { name: '', message: 'the name is empty' },
      { name: 'n'.repeat(257), message: 'the definition cannot be stored: /source/originalName must NOT have more than 256 characters' },
    ]);
    expect(run([offer('n'.repeat(256))]).rejected).toEqual([]);
  });

  it('accepts a name that makes an id of exactly 64 characters', () => {
    const name = 'y'.repeat(64 - 'mcp__srv__'.length);
    expect(run([offer(name)]).added).toEqual([`mcp__srv__${name}`]);
  });

  it('suffixes two names that meet after mapping and overwrites neither', () => {
    const r = run([offer('a.b', { description: 'dot' }), offer('a/b', { description: 'slash' })]);
    expect(r.added).toEqual([`mcp__srv__a_b_${sha8('a.b')}`, `mcp__srv__a_b_${sha8('a/b')}`]);
    expect(r.changes.map((c) => [c.after.description, c.after.source?.originalName])).toEqual([
      ['dot', 'a.b'],
      ['slash', 'a/b'],
    ]);
    expect(run([offer('a/b', { description: 'slash' }), offer('a.b', { description: 'dot' })]).added.sort()).toEqual([...r.added].sort());
  });

  it('keeps the ids of tools already imported when a name that meets one appears in a later sync', () => {
    const inventory = approvedInventory([offer('a.b')]);
    expect(inventory[0].id).toBe('mcp__srv__a_b');
    const r = run([offer('a.b'), offer('a/b')], inventory, LATER);
    expect(r.added).toEqual([`mcp__srv__a_b_${sha8('a/b')}`]);
    expect(r.changes).toHaveLength(1);
    expect(r.removed).toEqual([]);
    // Synced again with both present, nothing moves.
    expect(run([offer('a/b'), offer('a.b')], [...inventory, r.changes[0].after], LATER).changes).toEqual([]);
  });

  it('gives a removed tool its id back when its name returns, and suffixes a newcomer that meets it', () => {
    const [approved] = approvedInventory([offer('a.b')]);
    const removed: Tool = { ...approved, status: 'removed' };
    const r = run([offer('a/b'), offer('a.b')], [removed]);
    expect(r.added.sort()).toEqual(['mcp__srv__a_b', `mcp__srv__a_b_${sha8('a/b')}`].sort());
    expect(r.changes.find((c) => c.after.id === 'mcp__srv__a_b')?.after.source?.originalName).toBe('a.b');
  });

  it('rejects a name offered twice and keeps the first', () => {
    const r = run([offer('dup'), offer('dup', { description: 'other' })]);
    expect(r.added).toEqual(['mcp__srv__dup']);
    expect(r.changes[0].after.description).toBe('dup does things');
    expect(r.rejected).toEqual([{ name: 'dup', message: expect.stringContaining('more than once') }]);
  });

  it('never overwrites a tool of the same id that was not imported from this server', () => {
    const core: Tool = {
      id: 'mcp__srv__taken',
      description: 'made by hand',
      inputSchema: obj(),
      effect: 'read_only',
      status: 'active',
      source: { kind: 'core' },
    };
    const r = run([offer('taken')], [core]);
    expect(r.rejected).toEqual([]);
    expect(r.added).toEqual([`mcp__srv__taken_${sha8('taken')}`]);
    expect(r.changes.map((c) => c.before)).toEqual([null]);
    const hashedToo: Tool = { ...core, id: `mcp__srv__taken_${sha8('taken')}` };
    const both = run([offer('taken')], [core, hashedToo]);
    expect(both.changes).toEqual([]);
    expect(both.rejected[0]).toMatchObject({ name: 'taken', message: expect.stringContaining('already used') });
  });

  it('ignores tools of other servers when deciding what vanished', () => {
    const other = reconcileTools({ serverId: 'other', offered: [offer('a')], existing: [], now: NOW, checkInputSchema: () => [] }).changes[0].after;
    expect(run([], [other]).changes).toEqual([]);
  });

  it('imports a tool whose input schema leaves the dialect, quarantined and flagged', () => {
    const schema = { type: 'object', properties: { connectionId: { type: 'string' }, v: { $dynamicRef: '#v' } } };
    const r = run([offer('odd', { inputSchema: schema })]);
    expect(r.added).toEqual(['mcp__srv__odd']);
    expect(r.changes[0].after.status).toBe('quarantined');
    expect(r.flagged[0].id).toBe('mcp__srv__odd');
    const pointers = r.changes[0].after.review?.problems?.map((p) => p.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/inputSchema/properties/connectionId', '/inputSchema/properties/v/$dynamicRef']));
  });

  it('quarantines an approved tool whose server now offers a definition the inventory cannot hold', () => {
    const [approved] = approvedInventory([offer('search')]);
    const r = run([offer('search', { description: 'w'.repeat(9000) })], [approved], LATER);
    expect(r.changed).toEqual(['mcp__srv__search']);
    expect(r.rejected[0]).toMatchObject({ name: 'search', message: expect.stringContaining('/description') });
    const after = r.changes[0].after;
    expect(after.status).toBe('quarantined');
    expect(after.description).toBe(approved.description);
    expect(after.definitionHash).toBe(after.review?.current.definitionHash);
    expect(after.definitionHash).not.toBe(approved.definitionHash);
    expect(after.review?.previous?.definitionHash).toBe(approved.definitionHash);
    expect(after.review?.problems?.[0].pointer).toBe('/description');
    expect(run([offer('search', { description: 'w'.repeat(9000) })], [after], LATER).changes).toEqual([]);
  });

  it('sends a disabled tool whose definition changed to quarantine too', () => {
    const [approved] = approvedInventory([offer('search')]);
    const r = run([offer('search', { description: 'changed' })], [{ ...approved, status: 'disabled' }]);
    expect(r.changes[0].after.status).toBe('quarantined');
    expect(r.changes[0].after.review?.previous?.definitionHash).toBe(approved.definitionHash);
  });

  it('rejects a definition the inventory cannot hold, such as an overlong description', () => {
    const r = run([offer('wordy', { description: 'w'.repeat(9000) })]);
    expect(r.changes).toEqual([]);
    expect(r.rejected[0]).toMatchObject({ name: 'wordy', message: expect.stringContaining('/description') });
  });
});
