import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterEvents } from '../cluster/cluster-events.ts';
import { ToolgateDatabase } from '../db/database.ts';
import { createMetrics } from '../observability/metrics.ts';
import { KeyStore } from '../signing/key-store.ts';
import { runChange } from './change.ts';
import { checkpointBytes, listCheckpoints, startCheckpointScheduler, takeCheckpoint } from './checkpoints.ts';
import { verifyCheckpointSignature } from './checkpoint-verify.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-checkpoints-'));
  dirs.push(dir);
  const database = new ToolgateDatabase(join(dir, 'toolgate.db'));
  await database.migrateToLatest();
  const keys = new KeyStore(join(dir, 'keys'));
  // The server's cluster events carry each append to the checkpoint rule.
  const deps = { database, metrics: createMetrics(), logger: pino({ level: 'silent' }), cluster: new ClusterEvents() };
  const change = (n: number) =>
    runChange(deps, { actor: 'system', requestId: null, reason: null }, (ch) =>
      ch.record({ action: 'create', entityType: 'group', entityId: `g${n}`, tenant: null, after: { n } }),
    );
  return { database, keys, deps, change };
}

const until = async (what: string, cond: () => Promise<boolean>) => {
  const end = Date.now() + 10_000;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('audit checkpoints', () => {
  it('signs the chain head with a key of the key set, once per head, and nothing for an empty log', async () => {
    const { database, keys, change } = await setup();
    expect(await takeCheckpoint(database, keys)).toBeNull();
    await change(1);
    await change(2);
    const cp = (await takeCheckpoint(database, keys))!;
    const head = await database.db.selectFrom('audit_events').select(['seq', 'hash']).orderBy('seq', 'desc').executeTakeFirstOrThrow();
    expect(cp).toMatchObject({ format: 'toolgate.audit-checkpoint/v1', seq: head.seq, hash: head.hash });
    expect(await takeCheckpoint(database, keys)).toEqual(cp);
    expect(await listCheckpoints(database.db, 0, 10)).toHaveLength(1);
    const { keySet } = await keys.keySet();
    const trusted = { keys: keySet.keys.map((k) => ({ ...k })) };
    expect(await verifyCheckpointSignature(cp, trusted)).toBeNull();
    expect(await verifyCheckpointSignature({ ...cp, seq: cp.seq + 1 }, trusted)).toMatch(/does not verify/);
    expect(await verifyCheckpointSignature(cp, { keys: [] })).toMatch(/not a signing key/);
    expect(checkpointBytes(cp).toString()).toBe(`{"at":"${cp.at}","format":"toolgate.audit-checkpoint/v1","hash":"${cp.hash}","seq":${cp.seq}}`);
    await database.close();
  });

  it('takes one as soon as the configured number of events is reached, and on the interval only when the head moved', async () => {
    const { database, keys, deps, change } = await setup();
    const stop = startCheckpointScheduler(deps, keys, { everyEvents: 5, everyMs: 60 * 60_000 });
    for (let i = 0; i < 4; i++) await change(i);
    expect(await listCheckpoints(database.db, 0, 10)).toHaveLength(0);
    await change(4);
    await until('a checkpoint at seq 5', async () => (await listCheckpoints(database.db, 0, 10))[0]?.seq === 5);
    for (let i = 5; i < 9; i++) await change(i);
    await stop();
    expect((await listCheckpoints(database.db, 0, 10)).map((c) => c.seq)).toEqual([5]);

    const stopTimed = startCheckpointScheduler(deps, keys, { everyEvents: 1000, everyMs: 50 });
    await until('a timed checkpoint at seq 9', async () => (await listCheckpoints(database.db, 0, 10))[0]?.seq === 9);
    await new Promise((r) => setTimeout(r, 200));
    await stopTimed();
    expect((await listCheckpoints(database.db, 0, 10)).map((c) => c.seq)).toEqual([9, 5]);
    await database.close();
  });
});
