// Someone with write access to the SQLite file rewrites history: an event changed and every hash
// after it recomputed, events cut off the end, checkpoint rows deleted. The chain alone still
// links, so the server must hold it to its own signed checkpoints: `/v1/audit/verify` names the
// contradicted checkpoint, no new checkpoint is signed over the forged head, and checkpoints kept
// in the mirror directory's audit/checkpoints.jsonl still catch a rewrite whose rows were deleted.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { eventHash } from '../../server/audit/chain.ts';
import { MIRROR_CHECKPOINTS_FILE } from '../../server/audit/checkpoint-mirror.ts';
import { verifyCheckpointSignature } from '../../server/audit/checkpoint-verify.ts';
import { takeCheckpoint } from '../../server/audit/checkpoints.ts';
import { fromRow } from '../../server/audit/events.ts';
import { ChainContradiction } from '../../server/audit/held-checkpoints.ts';
import { run as auditCli } from '../../server/cli/commands/audit.ts';
import type { AuditEventsRow } from '../../server/db/tables/audit-events.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

const apps: TestApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function app(mirror = false): Promise<TestApp & { mirrorDir?: string }> {
  const t = await startTestApp();
  apps.push(t);
  if (!mirror) return t;
  // A second app over the same kind of settings, with a mirror directory: its own temp dir holds it.
  await t.close();
  apps.pop();
  const dir = `${t.dir}-mirror`;
  const m = await startTestApp({ settings: { mirrorDir: dir } });
  apps.push(m);
  return Object.assign(m, { mirrorDir: dir });
}

let n = 0;
async function edit(t: TestApp): Promise<void> {
  const r = await t.request('POST', '/v1/groups', { body: { name: `rewrite-${++n}`, description: 'an edit' } });
  expect(r.status, r.text).toBe(201);
}
async function exportSeq(t: TestApp): Promise<number> {
  const r = await t.request('GET', '/v1/audit/export');
  expect(r.status).toBe(200);
  return Number(r.headers.get('toolgate-checkpoint'));
}
/** An app whose audit trail has two signed checkpoints: `early` after one edit, `later` two edits on. */
async function appWithTwoCheckpoints(): Promise<{ t: TestApp; early: number; later: number }> {
  const t = await app();
  await edit(t);
  const early = await exportSeq(t);
  await edit(t);
  await edit(t);
  return { t, early, later: await exportSeq(t) };
}
const sqliteOf = (t: TestApp): Database.Database => t.deps.database.sqlite as Database.Database;

/** Runs `fn` with the append-only triggers of `table` dropped, as someone holding the file can. */
function withoutTriggers(db: Database.Database, table: string, fn: () => void): void {
  const triggers = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?").all(table) as { name: string; sql: string }[];
  for (const tr of triggers) db.exec(`DROP TRIGGER ${tr.name}`);
  fn();
  for (const tr of triggers) db.exec(tr.sql);
}

/** Changes event `seq`'s actor; with `recompute`, every hash from there is recomputed so the chain links again. */
function rewrite(t: TestApp, seq: number, recompute = true): void {
  const db = sqliteOf(t);
  withoutTriggers(db, 'audit_events', () => {
    db.prepare('UPDATE audit_events SET actor = ? WHERE seq = ?').run('token:someone-else', seq);
    if (!recompute) return;
    const rows = db.prepare('SELECT * FROM audit_events ORDER BY seq').all() as AuditEventsRow[];
    let prev = '0'.repeat(64);
    const update = db.prepare('UPDATE audit_events SET prev_hash = ?, hash = ? WHERE seq = ?');
    for (const row of rows) {
      const hash = eventHash({ ...fromRow(row), prevHash: prev });
      update.run(prev, hash, row.seq);
      prev = hash;
    }
  });
}
const checkpointCount = (t: TestApp) => (sqliteOf(t).prepare('SELECT count(*) AS n FROM audit_checkpoints').get() as { n: number }).n;

describe('history rewritten with recomputed hashes', () => {
  it('is reported by /v1/audit/verify, naming the checkpoint it contradicts and the seqs rewritten', async () => {
    const { t, early, later } = await appWithTwoCheckpoints();
    expect((await t.request('GET', '/v1/audit/verify')).json).toMatchObject({ ok: true, checkpoints: { verified: 2, unverified: 0, latest: { seq: later } } });

    rewrite(t, early - 1);
    const r = await t.request('GET', '/v1/audit/verify');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: false, firstBroken: { seq: early, reason: 'checkpoint_mismatch', checkpoint: { seq: early } } });
    expect(r.json.firstBroken.message).toContain(`history was rewritten in seq 1..${early}`);
  });

  it('after a checkpoint still matching, bounds the rewrite between the two checkpoints', async () => {
    const { t, early, later } = await appWithTwoCheckpoints();
    rewrite(t, early + 1);
    const r = await t.request('GET', '/v1/audit/verify');
    expect(r.json).toMatchObject({ ok: false, count: early, firstBroken: { seq: later, reason: 'checkpoint_mismatch', checkpoint: { seq: later } } });
    expect(r.json.firstBroken.message).toContain(`history was rewritten in seq ${early + 1}..${later} (it still matches the checkpoint at seq ${early})`);
  });

  it('is never vouched for: the next export and checkpoint sign nothing over the forged head', async () => {
    const t = await app();
    await edit(t);
    const early = await exportSeq(t);
    rewrite(t, early - 2);
    await edit(t);
    const before = checkpointCount(t);
    const r = await t.request('GET', '/v1/audit/export');
    expect(r.status).toBe(200);
    expect(r.headers.get('toolgate-checkpoint')).toBeNull();
    expect(r.headers.get('toolgate-chain-broken')).toBe(`seq ${early}: checkpoint_mismatch`);
    expect(r.text.trim().split('\n').length).toBeGreaterThan(early);
    await expect(takeCheckpoint(t.deps.database, t.deps.keys)).rejects.toBeInstanceOf(ChainContradiction);
    expect(checkpointCount(t)).toBe(before);
  });

  it('an event after the latest checkpoint altered without recomputing: no checkpoint signed over it', async () => {
    const t = await app();
    await edit(t);
    const early = await exportSeq(t);
    await edit(t);
    await edit(t);
    rewrite(t, early + 1, false);
    const before = checkpointCount(t);
    const r = await t.request('GET', '/v1/audit/export');
    expect(r.headers.get('toolgate-checkpoint')).toBeNull();
    expect(r.headers.get('toolgate-chain-broken')).toBe(`seq ${early + 1}: hash_mismatch`);
    expect(checkpointCount(t)).toBe(before);
    expect((await t.request('GET', '/v1/audit/verify')).json).toMatchObject({ ok: false, firstBroken: { seq: early + 1, reason: 'hash_mismatch' } });
  });

  it('events cut off after a checkpoint are reported as truncated, naming it', async () => {
    const t = await app();
    await edit(t);
    await edit(t);
    const cp = await exportSeq(t);
    const db = sqliteOf(t);
    withoutTriggers(db, 'audit_events', () => db.prepare('DELETE FROM audit_events WHERE seq > ?').run(cp - 2));
    const r = await t.request('GET', '/v1/audit/verify');
    expect(r.json).toMatchObject({ ok: false, firstBroken: { seq: cp, reason: 'truncated', checkpoint: { seq: cp } } });
    expect(r.json.firstBroken.message).toContain(`event ${cp} is missing`);
  });

  it('is caught by `toolgate audit verify` on the database, with the checkpoint named', async () => {
    const t = await app();
    await edit(t);
    const early = await exportSeq(t);
    rewrite(t, early - 1);
    const saved = { db: process.env.TOOLGATE_DB, keys: process.env.TOOLGATE_KEYS_DIR };
    process.env.TOOLGATE_DB = t.dbTarget;
    process.env.TOOLGATE_KEYS_DIR = t.deps.config.keysDir;
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
    const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
    try {
      expect(await auditCli(['verify'])).toBe(1);
      expect(await auditCli(['checkpoint'])).toBe(1);
    } finally {
      log.mockRestore();
      error.mockRestore();
      process.env.TOOLGATE_DB = saved.db;
      process.env.TOOLGATE_KEYS_DIR = saved.keys;
      if (saved.db === undefined) delete process.env.TOOLGATE_DB;
      if (saved.keys === undefined) delete process.env.TOOLGATE_KEYS_DIR;
    }
    expect(lines.join('\n')).toContain(`BROKEN at seq ${early}: event ${early} hashes to`);
    expect(lines.join('\n')).toContain(`(checkpoint at seq ${early}, signed at `);
    expect(lines.join('\n')).toContain('no checkpoint was signed');
  });

  it('`toolgate audit verify` with a keys directory holding no keys makes none, and trusts no checkpoint', async () => {
    const t = await app();
    await edit(t);
    await exportSeq(t);
    const empty = join(t.dir, 'no-keys');
    const saved = { db: process.env.TOOLGATE_DB, keys: process.env.TOOLGATE_KEYS_DIR };
    process.env.TOOLGATE_DB = t.dbTarget;
    process.env.TOOLGATE_KEYS_DIR = empty;
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
    try {
      expect(await auditCli(['verify'])).toBe(0);
    } finally {
      log.mockRestore();
      process.env.TOOLGATE_DB = saved.db;
      process.env.TOOLGATE_KEYS_DIR = saved.keys;
      if (saved.db === undefined) delete process.env.TOOLGATE_DB;
      if (saved.keys === undefined) delete process.env.TOOLGATE_KEYS_DIR;
    }
    expect(lines.join('\n')).toContain('held to 0 signed checkpoint(s); 1 checkpoint(s) ignored');
    expect(existsSync(empty) ? readdirSync(empty) : []).toEqual([]);
  });

  it('ignores a checkpoint row whose signature does not verify, and counts it', async () => {
    const t = await app();
    await edit(t);
    const cp = await exportSeq(t);
    await edit(t);
    const head = (await t.request('GET', '/v1/audit?order=desc&limit=1')).json.items[0];
    sqliteOf(t)
      .prepare('INSERT INTO audit_checkpoints (seq, hash, at, kid, signature) VALUES (?, ?, ?, ?, ?)')
      .run(head.seq, 'e'.repeat(64), new Date().toISOString(), 'forged', 'eyJhbGciOiJFZERTQSJ9..AAAA');
    const r = await t.request('GET', '/v1/audit/verify');
    expect(r.json).toMatchObject({ ok: true, checkpoints: { verified: 1, unverified: 1, latest: { seq: cp } } });
  });
});

describe('checkpoints kept in the mirror directory', () => {
  it('are appended to audit/checkpoints.jsonl as they are signed, each verifying', async () => {
    const t = await app(true);
    await edit(t);
    const a = await exportSeq(t);
    await edit(t);
    const b = await exportSeq(t);
    await exportSeq(t); // the head did not move: nothing new to append
    const lines = readFileSync(join(t.mirrorDir!, MIRROR_CHECKPOINTS_FILE), 'utf8').trim().split('\n');
    const cps = lines.map((l) => JSON.parse(l));
    expect(cps.map((c) => c.seq)).toEqual([a, b]);
    const trusted = { keys: (await t.deps.keys.keySet()).keySet.keys };
    for (const cp of cps) expect(await verifyCheckpointSignature(cp, trusted)).toBeNull();
  });

  it('catch up with checkpoints signed before the mirror was set up', async () => {
    const t = await app();
    await edit(t);
    const before = await exportSeq(t);
    await edit(t);
    const mirror = join(t.dir, 'mirror-later');
    const cp = await takeCheckpoint(t.deps.database, t.deps.keys, { mirrorDir: mirror });
    const seqs = readFileSync(join(mirror, MIRROR_CHECKPOINTS_FILE), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).seq);
    expect(seqs).toEqual([before, cp?.seq]);
  });

  it('catch up even past a forged line in the file: only lines that verify say how far it reaches', async () => {
    const t = await app();
    const keys = t.deps.keys;
    await edit(t);
    const before = await exportSeq(t);
    const real = await takeCheckpoint(t.deps.database, keys);
    await edit(t);
    const mirror = join(t.dir, 'mirror-forged');
    mkdirSync(join(mirror, 'audit'), { recursive: true });
    // Well-formed, but its signature covers another seq: it verifies under no key.
    writeFileSync(join(mirror, MIRROR_CHECKPOINTS_FILE), `${JSON.stringify({ ...real, seq: 1_000_000 })}\n`);
    const cp = await takeCheckpoint(t.deps.database, keys, { mirrorDir: mirror });
    const seqs = readFileSync(join(mirror, MIRROR_CHECKPOINTS_FILE), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).seq);
    expect(seqs).toEqual([1_000_000, before, cp?.seq]);
  });

  it('still catch a rewrite after the checkpoint rows were deleted from the database', async () => {
    const t = await app(true);
    await edit(t);
    const early = await exportSeq(t);
    await edit(t);
    const db = sqliteOf(t);
    withoutTriggers(db, 'audit_checkpoints', () => db.exec('DELETE FROM audit_checkpoints'));
    rewrite(t, early - 1);
    const r = await t.request('GET', '/v1/audit/verify');
    expect(r.json).toMatchObject({ ok: false, firstBroken: { seq: early, reason: 'checkpoint_mismatch' }, checkpoints: { verified: 1 } });
    const exported = await t.request('GET', '/v1/audit/export');
    expect(exported.headers.get('toolgate-checkpoint')).toBeNull();
  });

  it('are never written through a link: a linked audit folder or file is refused and logged', async () => {
    const t = await app(true);
    const mirror = t.mirrorDir!;
    const elsewhere = join(t.dir, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    const errors: string[] = [];
    const logger = { error: (_details: object, message: string) => void errors.push(message) };
    const keys = t.deps.keys;

    rmSync(join(mirror, 'audit'), { recursive: true, force: true });
    mkdirSync(mirror, { recursive: true });
    symlinkSync(elsewhere, join(mirror, 'audit'));
    await edit(t);
    expect(await takeCheckpoint(t.deps.database, keys, { mirrorDir: mirror, logger })).not.toBeNull();
    expect(existsSync(join(elsewhere, 'checkpoints.jsonl'))).toBe(false);
    expect(errors).toEqual(['audit checkpoints of the mirror directory not read', 'audit checkpoint not written to the mirror directory']);

    rmSync(join(mirror, 'audit'));
    mkdirSync(join(mirror, 'audit'));
    const target = join(elsewhere, 'target.txt');
    writeFileSync(target, 'unchanged\n');
    symlinkSync(target, join(mirror, 'audit', 'checkpoints.jsonl'));
    await edit(t);
    expect(await takeCheckpoint(t.deps.database, keys, { mirrorDir: mirror, logger })).not.toBeNull();
    expect(readFileSync(target, 'utf8')).toBe('unchanged\n');
    expect(errors.slice(2)).toEqual(['audit checkpoints of the mirror directory not read', 'audit checkpoint not written to the mirror directory']);
  });
});
