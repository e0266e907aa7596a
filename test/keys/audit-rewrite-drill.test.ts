// The audit-rewrite drill: someone with write access to the database rewrites one event and
// recomputes every hash. The chain check alone cannot tell; a checkpoint kept from before can,
// and says where: the auditor's, and the server's own (it verifies the database against them and
// signs no new checkpoint over the forged head).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run as auditCli } from '../../server/cli/commands/audit.ts';
import { eventHash } from '../../server/audit/chain.ts';
import { fromRow } from '../../server/audit/events.ts';
import type { AuditEventsRow } from '../../server/db/tables/audit-events.ts';
import { startLiveServer } from '../distribution/live-server.ts';
import type { LiveServer } from '../distribution/live-server.ts';

let srv: LiveServer;

beforeAll(async () => {
  srv = await startLiveServer({ seed: true });
});

afterAll(async () => {
  await srv.dispose();
});

/** `toolgate audit …` as the CLI runs it, in this process (its output captured). */
async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  const saved = { db: process.env.TOOLGATE_DB, keys: process.env.TOOLGATE_KEYS_DIR };
  process.env.TOOLGATE_DB = join(srv.dir, 'toolgate.db');
  process.env.TOOLGATE_KEYS_DIR = srv.deps.config.keysDir;
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  try {
    const [sub, ...rest] = args;
    const code = await auditCli([sub, ...rest]);
    return { code, out: lines.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
    for (const [k, v] of [
      ['TOOLGATE_DB', saved.db],
      ['TOOLGATE_KEYS_DIR', saved.keys],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

async function edit(name: string): Promise<void> {
  const r = await srv.api('POST', '/v1/groups', { body: { name, description: `group ${name}` } });
  expect(r.status, r.text).toBe(201);
}

describe('audit rewrite drill', () => {
  it('is invisible to the chain check alone and caught by a checkpoint kept from before, naming the seq', async () => {
    // The auditor exports (which signs a checkpoint) and keeps the checkpoint outside the database.
    await edit('drill-a');
    const early = await srv.api('GET', '/v1/audit/export');
    const earlySeq = Number(early.headers.get('toolgate-checkpoint'));
    expect(earlySeq).toBeGreaterThan(3);
    await edit('drill-b');
    await edit('drill-c');
    await srv.api('GET', '/v1/audit/export');
    const kept = await srv.api('GET', '/v1/audit/checkpoints', { token: await srv.tokenFor('auditor') });
    expect(kept.status).toBe(200);
    expect(kept.json.items.map((c: { seq: number }) => c.seq)).toContain(earlySeq);
    const latest = kept.json.items[0];
    const cpFile = join(srv.dir, 'checkpoints.json');
    writeFileSync(cpFile, JSON.stringify(kept.json));
    const oneFile = join(srv.dir, 'latest-checkpoint.json');
    writeFileSync(oneFile, JSON.stringify((await srv.api('GET', '/v1/audit/checkpoints/latest')).json));
    // The root public key and the key set, to check the checkpoints' signatures.
    const keyset = await srv.api('GET', '/.well-known/toolgate-keyset.json', { token: null });
    writeFileSync(join(srv.dir, 'keyset.json'), keyset.bytes);
    writeFileSync(join(srv.dir, 'keyset.jws'), keyset.headers.get('toolgate-signature')!);
    writeFileSync(join(srv.dir, 'root.json'), JSON.stringify({ keys: keyset.json.roots }));
    await srv.stop();

    const clean = await cli('verify', '--checkpoint', cpFile, '--root', join(srv.dir, 'root.json'), '--keyset', join(srv.dir, 'keyset.json'));
    expect(clean.out).toContain('checkpoint signature(s) verified');
    expect(clean.code, clean.out).toBe(0);

    // The rewrite: triggers dropped, one actor changed (after the early checkpoint), every hash recomputed, triggers restored.
    const target = earlySeq + 1;
    const db = new Database(join(srv.dir, 'toolgate.db'));
    const triggers = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_events'").all() as { sql: string }[];
    expect(triggers.length).toBe(2);
    db.exec('DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_events_no_delete;');
    db.prepare('UPDATE audit_events SET actor = ? WHERE seq = ?').run('token:someone-else', target);
    const rows = db.prepare('SELECT * FROM audit_events ORDER BY seq').all() as AuditEventsRow[];
    let prev = '0'.repeat(64);
    const update = db.prepare('UPDATE audit_events SET prev_hash = ?, hash = ? WHERE seq = ?');
    for (const row of rows) {
      const e = { ...fromRow(row), prevHash: prev };
      const hash = eventHash(e);
      update.run(prev, hash, row.seq);
      prev = hash;
    }
    for (const t of triggers) db.exec(t.sql);
    db.close();

    // The database check holds the chain to the server's own signed checkpoints: the rewrite shows.
    const alone = await cli('verify');
    expect(alone.code, alone.out).toBe(1);
    expect(alone.out).toMatch(/BROKEN at seq \d+: event \d+ hashes to [0-9a-f]{64}, but the checkpoint at seq \d+ signed at /);
    expect(alone.out).toContain(`history was rewritten in seq ${earlySeq + 1}..`);

    // An export still streams (it is the evidence), but no checkpoint is signed over the forged head.
    const exportFile = join(srv.dir, 'after.jsonl');
    const exported = await cli('export', '--out', exportFile);
    expect(exported.code).toBe(0);
    expect(exported.out).toContain('no checkpoint signed: the chain is BROKEN');
    // The export alone is a chain that links: only the checkpoints show what it contradicts.
    expect((await cli('verify', exportFile)).code).toBe(0);

    // With the checkpoints kept before: refused, naming where the history stops matching.
    const caught = await cli('verify', exportFile, '--checkpoint', cpFile, '--root', join(srv.dir, 'root.json'), '--keyset', join(srv.dir, 'keyset.json'));
    expect(caught.code, caught.out).toBe(1);
    const next = kept.json.items
      .map((c: { seq: number }) => c.seq)
      .filter((s: number) => s >= target)
      .sort((a: number, b: number) => a - b)[0];
    expect(caught.out).toContain(`REWRITTEN at seq ${next}`);
    expect(caught.out).toContain(`seq ${earlySeq + 1}..${next}`);

    // A single kept checkpoint is enough to refuse.
    const single = await cli('verify', exportFile, '--checkpoint', oneFile);
    expect(single.code, single.out).toBe(1);
    expect(single.out).toContain(`REWRITTEN at seq ${latest.seq}`);

    // A forged checkpoint (right shape, signed by no trusted key) is itself refused.
    writeFileSync(oneFile, JSON.stringify({ ...latest, hash: 'f'.repeat(64) }));
    const forged = await cli('verify', exportFile, '--checkpoint', oneFile, '--root', join(srv.dir, 'root.json'), '--keyset', join(srv.dir, 'keyset.json'));
    expect(forged.code).toBe(1);
    expect(forged.out).toContain('REFUSED: checkpoint at seq');
  });
});
