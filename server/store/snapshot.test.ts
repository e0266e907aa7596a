import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '../../policy-schemas/types.gen.ts';
import { type TestApp, startTestApp } from '../../test/support/harness.ts';
import { compileBundle } from '../compiler/compile-bundle.ts';
import { snapshotFingerprint } from '../compiler/snapshot-fingerprint.ts';
import { cachedToolDocuments, toolStore } from './inventory.ts';
import { type DraftSnapshot, loadDraftSnapshot } from './snapshot.ts';
import { SnapshotReader, snapshotText } from './snapshot-text.ts';

const TENANT = 'acme-research';
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const db = () => t.deps.database.db;
const load = async () => (await loadDraftSnapshot(db(), TENANT)) as DraftSnapshot;
const revision = (s: DraftSnapshot) => {
  const r = compileBundle(s, { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00.000Z' });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.revision;
};

describe('the draft snapshot reuses the parsed inventory', () => {
  it('gives the same frozen tool list while no tool changes, and the same fingerprint', async () => {
    const a = await load();
    const b = await load();
    expect(b.tools).toBe(a.tools);
    expect(Object.isFrozen(a.tools)).toBe(true);
    expect(() => (a.tools as Tool[]).push(a.tools[0])).toThrow(TypeError);
    // A tool in it cannot be changed in place either: the list's remembered text and hash would lie.
    expect(() => {
      (a.tools[0] as { description?: string }).description = 'changed in place';
    }).toThrow(TypeError);
    expect(b.tools[0].description).not.toBe('changed in place');
    expect(snapshotFingerprint(b)).toBe(snapshotFingerprint(a));
  });

  it('reads a tool edited through the API: new list, new fingerprint, another bundle', async () => {
    const before = await load();
    const id = before.tools.find((x) => x.status !== 'removed')!.id;
    const got = await t.request('GET', `/v1/tools/${id}`);
    const { version: _v, createdAt: _c, updatedAt: _u, ...doc } = got.json as Tool & Record<string, unknown>;
    const put = await t.request('PUT', `/v1/tools/${id}`, {
      body: { ...doc, description: 'Edited between two compiles' },
      headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(put.status).toBe(200);
    const after = await load();
    expect(after.tools).not.toBe(before.tools);
    expect(after.tools.find((x) => x.id === id)?.description).toBe('Edited between two compiles');
    expect(snapshotFingerprint(after)).not.toBe(snapshotFingerprint(before));
    expect(revision(after)).not.toBe(revision(before));
  });

  it('reads a tool deleted and made again at version 1 with the same timestamp', async () => {
    const now = '2030-01-01T00:00:00.000Z';
    const tool: Tool = { id: 'core__twice', description: 'first', inputSchema: { type: 'object' }, effect: 'read_only', redaction: { allow: [] } };
    await toolStore.insert(db(), tool.id, tool, now);
    const first = await cachedToolDocuments(db());
    expect(first.find((x) => x.id === tool.id)?.description).toBe('first');
    expect(await toolStore.remove(db(), tool.id, 1)).toBe(true);
    await toolStore.insert(db(), tool.id, { ...tool, description: 'made again' }, now);
    const second = await cachedToolDocuments(db());
    expect(second.find((x) => x.id === tool.id)?.description).toBe('made again');
    // A transaction reads the table itself, never another handle's cache.
    const inTx = await db()
      .transaction()
      .execute((tx) => cachedToolDocuments(tx));
    expect(inTx).not.toBe(second);
    expect(inTx.map((x) => x.description)).toEqual(second.map((x) => x.description));
  });

  it('fingerprints a hand-built snapshot from its tools as they are now (only a frozen list is remembered)', async () => {
    const s = await load();
    const own: DraftSnapshot = { ...s, tools: [...s.tools] };
    const f = snapshotFingerprint(own);
    expect(snapshotFingerprint(own)).toBe(f);
    expect(f).toBe(snapshotFingerprint(s));
    own.tools.push({ id: 'core__added', description: 'x', inputSchema: { type: 'object' }, effect: 'read_only' });
    expect(snapshotFingerprint(own)).not.toBe(f);
    own.tools.pop();
    own.tools[0] = { ...own.tools[0], description: 'changed in place' };
    expect(snapshotFingerprint(own)).not.toBe(f);
  });
});

describe('a snapshot as text for the compile worker', () => {
  it('reads back as the same snapshot, keeping the frozen tool list while the tools are the same', async () => {
    const s = await load();
    const reader = new SnapshotReader();
    const first = reader.read(snapshotText(s));
    expect(first).toEqual(s);
    expect(Object.isFrozen(first.tools)).toBe(true);
    // A policy edit: the same tools, a new policy.
    const edited = { ...s, policy: { ...s.policy, bindings: { ...s.policy.bindings, 'agent:new': ['r'] } } };
    const second = reader.read(snapshotText(edited));
    expect(second.tools).toBe(first.tools);
    expect(second.policy.bindings?.['agent:new']).toEqual(['r']);
    expect(snapshotFingerprint(second)).toBe(snapshotFingerprint(edited));
    // A tool edit: another list, read afresh.
    const tools = s.tools.map((x, i) => (i === 0 ? { ...x, description: 'edited' } : x));
    const third = reader.read(snapshotText({ ...s, tools }));
    expect(third.tools).not.toBe(first.tools);
    expect(third.tools[0].description).toBe('edited');
    expect(revision(third)).toBe(revision({ ...s, tools }));
  });

  it('refuses a text that is not one', () => {
    expect(() => new SnapshotReader().read('{"tenant":{}}')).toThrow(TypeError);
  });
});

describe('a tool deleted and made again', () => {
  it('is read anew even when count, versions, bytes and the newest stamp all come out the same (a replica whose clock is behind)', async () => {
    const tool = (description: string): Tool => ({
      id: 'core__remade',
      description,
      effect: 'read_only',
      inputSchema: { type: 'object' },
      source: { kind: 'core' },
    });
    const ahead: Tool = { ...tool('stamped by a replica whose clock runs ahead'), id: 'core__ahead' };
    await t.deps.database.change(async (tx) => {
      await toolStore.insert(tx, 'core__remade', tool('first'), '2026-01-01T00:00:00.000Z');
      await toolStore.insert(tx, 'core__ahead', ahead, '2030-01-01T00:00:00.000Z');
    });
    expect((await cachedToolDocuments(db())).find((x) => x.id === 'core__remade')?.description).toBe('first');
    await t.deps.database.change(async (tx) => {
      expect(await toolStore.remove(tx, 'core__remade', 1)).toBe(true);
      // Version 1 again, a description of the same length, a stamp older than the newest.
      await toolStore.insert(tx, 'core__remade', tool('again'), '2026-06-01T00:00:00.000Z');
    });
    expect((await cachedToolDocuments(db())).find((x) => x.id === 'core__remade')?.description).toBe('again');
    expect((await load()).tools.find((x) => x.id === 'core__remade')?.description).toBe('again');
  });
});
