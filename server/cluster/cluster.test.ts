import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { insertToken } from '../auth/tokens.ts';
import { TokenCache } from '../auth/token-cache.ts';
import { ApprovalEvents } from '../approvals/approval-events.ts';
import { hashSecret } from '../auth/tokens.ts';
import { ToolgateDatabase } from '../db/database.ts';
import { type PublishedEvent, PublishEvents } from '../distribution/publish-events.ts';
import { createMetrics } from '../observability/metrics.ts';
import { KeyStore } from '../signing/key-store.ts';
import type { KeySetOrigin } from '../signing/key-store.ts';
import { startTempPostgres } from '../../test/support/postgres.ts';
import { advisoryLock } from './advisory-lock.ts';
import { startCluster } from './cluster.ts';
import { CLUSTER_CHANNEL, ClusterEvents } from './cluster-events.ts';
import { AdvisoryLockLeadership } from './advisory-leadership.ts';
import { SoleLeader, whileLeader } from './leadership.ts';
import { NotifyChannel } from './notify-channel.ts';

// Two "replicas" in one test process: each has its own channel, leadership and (SQLite) database
// standing in for its in-memory state, on one throwaway PostgreSQL cluster.
let pgUrl = '';
let stopPg: () => void = () => undefined;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  const started = await startTempPostgres();
  pgUrl = started.url;
  stopPg = started.stop;
}, 60_000);

// Each test's replicas, channels and contenders go with it: a replica left behind would hear the next test's notices.
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

afterAll(() => stopPg());

/** Polls `check` until it holds; the test's own timeout bounds the wait. */
async function until(check: () => boolean | Promise<boolean>, everyMs = 20): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, everyMs));
}

async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Ends every server session of an application name, as a network cut or a database restart would. */
async function cutConnections(applicationName: string): Promise<number> {
  const rows = await sql<{ n: string }>('SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
  return Number(rows[0].n);
}

async function channel(name: string, onMessage: (p: string) => void, onReconnect?: () => void): Promise<NotifyChannel> {
  const c = new NotifyChannel({ url: pgUrl, channel: name, onMessage, onReconnect, retryMs: 50 });
  await c.start();
  cleanups.push(() => c.close());
  return c;
}

async function replica(keysDir?: string) {
  const database = new ToolgateDatabase(':memory:');
  await database.migrateToLatest();
  let events: ClusterEvents | undefined;
  const ch = await channel(
    CLUSTER_CHANNEL,
    (p) => events?.receive(p),
    () => events?.resync(),
  );
  // Each replica's own publish notices and token cache, as its application context would own them.
  const publish = new PublishEvents();
  const tokens = new TokenCache(database);
  events = new ClusterEvents({ publishEvents: publish, tokens, approvalEvents: new ApprovalEvents() });
  events.connect({ leadership: new SoleLeader(), channel: ch });
  const keys = keysDir ? new KeyStore(keysDir) : undefined;
  if (keys) events.followKeys(keys);
  cleanups.push(async () => {
    await events.close();
    await database.close();
  });
  return { database, events, keys, channel: ch, publish, tokens };
}

describe('NotifyChannel', () => {
  it('delivers a notice to every listener, in order, the sender included', async () => {
    const a: string[] = [];
    const b: string[] = [];
    const ca = await channel('t_order', (p) => a.push(p));
    await channel('t_order', (p) => b.push(p));
    for (let i = 0; i < 200; i++) ca.notify(`n${i}`);
    await until(() => a.length === 200 && b.length === 200);
    expect(b).toEqual(Array.from({ length: 200 }, (_, i) => `n${i}`));
    expect(a).toEqual(b);
  });

  it('refuses a payload PostgreSQL would refuse, and a channel name that is not a plain identifier', async () => {
    const c = await channel('t_size', () => undefined);
    expect(() => c.notify('x'.repeat(8000))).toThrow(/under 8000 bytes/);
    expect(() => new NotifyChannel({ url: pgUrl, channel: 'x; DROP TABLE tokens', onMessage: () => undefined })).toThrow(/identifier/);
  });

  it('a sender whose connection is cut sends what was announced meanwhile once it is back', async () => {
    const heard: string[] = [];
    const sender = new NotifyChannel({ url: pgUrl, channel: 't_cut', onMessage: () => undefined, retryMs: 50, applicationName: 't-sender' });
    await sender.start();
    cleanups.push(() => sender.close());
    await channel('t_cut', (p) => heard.push(p));
    sender.notify('before');
    await until(() => heard.includes('before'));
    expect(await cutConnections('t-sender')).toBe(1);
    await until(() => !sender.connected);
    sender.notify('while-down');
    sender.notify('after');
    await until(() => heard.includes('after'));
    expect(heard).toEqual(['before', 'while-down', 'after']);
  });

  it('a listener whose connection is cut listens again and says so, so its owner can re-read what it missed', async () => {
    const heard: string[] = [];
    let reconnects = 0;
    const sender = await channel('t_relisten', () => undefined);
    const listener = await channel(
      't_relisten',
      (p) => heard.push(p),
      () => reconnects++,
    );
    expect(await cutConnections('toolgate-events')).toBe(2);
    await until(() => reconnects === 1 && listener.connected && sender.connected);
    sender.notify('after');
    await until(() => heard.includes('after'));
    expect(heard).toEqual(['after']);
  });
});

describe('AdvisoryLockLeadership', () => {
  function contender(retryMs = 100) {
    const l = new AdvisoryLockLeadership({ url: pgUrl, retryMs });
    cleanups.push(() => l.close());
    return l;
  }

  it('gives leadership to exactly one replica, and to another once the leader closes', async () => {
    const [a, b, c] = [contender(), contender(), contender()];
    await Promise.all([a.start(), b.start(), c.start()]);
    await until(() => [a, b, c].some((l) => l.leader));
    expect([a, b, c].filter((l) => l.leader)).toHaveLength(1);
    const first = [a, b, c].find((l) => l.leader)!;
    await first.close();
    const rest = [a, b, c].filter((l) => l !== first);
    await until(() => rest.some((l) => l.leader));
    expect(rest.filter((l) => l.leader)).toHaveLength(1);
    expect(first.leader).toBe(false);
    for (const l of rest) await l.close();
  });

  it('moves to another replica when the leader loses its connection, and the old leader knows it lost', async () => {
    // a retries slowly, so b's next attempt comes first (otherwise either may win the lock back).
    const a = contender(30_000);
    await a.start();
    expect(a.leader).toBe(true);
    const b = contender();
    await b.start();
    expect(b.leader).toBe(false);
    const changes: boolean[] = [];
    a.onChange((leader) => changes.push(leader));
    // Cut only a's session: the one holding the lock.
    const holders = await sql<{ pid: number }>(
      "SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND ((l.classid::bigint << 32) | l.objid::bigint) = $1::bigint",
      [String(0x74676c6561646572n)],
    );
    expect(holders).toHaveLength(1);
    await sql('SELECT pg_terminate_backend($1)', [holders[0].pid]);
    await until(() => b.leader);
    await until(() => changes.includes(false));
    expect(a.leader).toBe(false);
    await a.close();
    await b.close();
  });

  it('runs a job only while leading: started on gaining, stopped on losing', async () => {
    const a = contender();
    const b = contender();
    await a.start();
    await b.start();
    const running = new Set<string>();
    const stopA = whileLeader(a, () => {
      running.add('a');
      return async () => void running.delete('a');
    });
    const stopB = whileLeader(b, () => {
      running.add('b');
      return async () => void running.delete('b');
    });
    expect([...running]).toEqual(['a']);
    await a.close();
    await until(() => running.has('b'));
    expect([...running]).toEqual(['b']);
    await stopA();
    await stopB();
    expect(running.size).toBe(0);
  });

  it('on SQLite the one process leads from the start, in the same turn', () => {
    let started = false;
    const stop = whileLeader(new SoleLeader(), () => {
      started = true;
      return async () => undefined;
    });
    expect(started).toBe(true);
    return stop();
  });
});

describe('advisoryLock', () => {
  it('lets one process at a time hold it; a failed holder releases it', async () => {
    const lock = advisoryLock(pgUrl, 42n);
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        lock(async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((r) => setTimeout(r, 20));
          order.push(i);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    await expect(
      lock(async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await lock(async () => 'free again')).toBe('free again');
  });
});

describe('ClusterEvents across two replicas', () => {
  it('a publish announced on one wakes the other (its publishEvents fire), after its own local one', async () => {
    const a = await replica();
    const b = await replica();
    const seen: PublishedEvent[] = [];
    const on = (e: PublishedEvent) => seen.push(e);
    a.publish.on('published', on);
    b.publish.on('published', on);
    try {
      a.events.announce({ type: 'published', tenant: 'acme', version: 7 });
      // In this process at once (as SQLite always did) …
      expect(seen).toEqual([{ tenant: 'acme', version: 7 }]);
      // … and once more when the other replica hears it (both live in this test process).
      await until(() => seen.length === 2);
      expect(seen[1]).toEqual({ tenant: 'acme', version: 7 });
    } finally {
      a.publish.off('published', on);
      b.publish.off('published', on);
    }
  });

  it('a token change announced on one drops the other replica’s cached lookups', async () => {
    const a = await replica();
    const b = await replica();
    const secret = 'tg_cluster_test_token_0123456789abcdef';
    await insertToken(b.database.db, { id: 'tok1', label: 'x', role: 'viewer', tenants: [], secret, now: new Date().toISOString() });
    // The lookups pass one instant, so the cache's own expiry never drops the entry here.
    const at = Date.now();
    expect((await b.tokens.find(hashSecret(secret), at))?.id).toBe('tok1');
    // Revoked behind the cache's back: still served from it …
    await b.database.db.deleteFrom('tokens').where('id', '=', 'tok1').execute();
    expect((await b.tokens.find(hashSecret(secret), at))?.id).toBe('tok1');
    // … until the replica that revoked it says so.
    a.events.announce({ type: 'tokens-changed' });
    await until(async () => (await b.tokens.find(hashSecret(secret), at)) === undefined);
  });

  it('a removed tenant drops both the bundles and the tokens cached on the other replica', async () => {
    const a = await replica();
    const b = await replica();
    const removed: string[] = [];
    const on = (t: string) => removed.push(t);
    a.publish.on('tenant-removed', on);
    b.publish.on('tenant-removed', on);
    const secret = 'tg_cluster_test_token_fedcba9876543210';
    await insertToken(b.database.db, { id: 'tok2', label: 'x', role: 'editor', tenants: ['gone'], secret, now: new Date().toISOString() });
    const at = Date.now();
    await b.tokens.find(hashSecret(secret), at);
    await b.database.db.deleteFrom('tokens').where('id', '=', 'tok2').execute();
    expect((await b.tokens.find(hashSecret(secret), at))?.id).toBe('tok2');
    try {
      a.events.announce({ type: 'tenant-removed', tenant: 'gone' });
      await until(() => removed.length === 2);
      expect(await b.tokens.find(hashSecret(secret), at)).toBeUndefined();
    } finally {
      a.publish.off('tenant-removed', on);
      b.publish.off('tenant-removed', on);
    }
  });

  it('ignores notices that are not JSON, do not match the schema, or are its own, and keeps listening', async () => {
    const b = await replica();
    const seen: PublishedEvent[] = [];
    const on = (e: PublishedEvent) => seen.push(e);
    b.publish.on('published', on);
    try {
      const replicaId = '00000000-0000-4000-8000-000000000000';
      for (const payload of [
        'not json',
        JSON.stringify({ replica: replicaId, event: { type: 'published', tenant: 'acme' } }),
        JSON.stringify({ replica: replicaId, event: { type: 'published', tenant: '../etc', version: 1 } }),
        JSON.stringify({ replica: replicaId, event: { type: 'drop-everything' } }),
        JSON.stringify({ replica: b.events.replica, event: { type: 'published', tenant: 'mine', version: 1 } }),
        JSON.stringify({ replica: replicaId, event: { type: 'published', tenant: 'acme', version: 3 } }),
      ]) {
        await sql('SELECT pg_notify($1, $2)', [CLUSTER_CHANNEL, payload]);
      }
      await until(() => seen.length >= 1);
      await new Promise((r) => setTimeout(r, 100));
      expect(seen).toEqual([{ tenant: 'acme', version: 3 }]);
    } finally {
      b.publish.off('published', on);
    }
  });

  it('coalesces audit appends: the others learn the newest seq without one notice per event', async () => {
    const a = await replica();
    const heard: number[] = [];
    await channel(CLUSTER_CHANNEL, (p) => {
      const n = JSON.parse(p) as { replica: string; event: { type: string; seq?: number } };
      if (n.replica === a.events.replica && n.event.type === 'audit-appended') heard.push(n.event.seq!);
    });
    for (let seq = 1; seq <= 500; seq++) a.events.announce({ type: 'audit-appended', seq });
    await until(() => heard.includes(500));
    expect(heard.length).toBeLessThan(10);
  });

  it('a key set signed on one replica is re-read by the other, whose listeners hear it came from elsewhere', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-cluster-keys-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const a = await replica(dir);
    const b = await replica(dir);
    const first = (await a.keys!.keySet()).keySet.version;
    expect((await b.keys!.keySet()).keySet.version).toBe(first);
    const heardA: KeySetOrigin[] = [];
    const heardB: KeySetOrigin[] = [];
    a.keys!.onKeySetChanged((o) => heardA.push(o));
    b.keys!.onKeySetChanged((o) => heardB.push(o));
    await a.keys!.rotate();
    await until(() => heardB.length === 1);
    expect(heardA).toEqual(['this-process']);
    expect(heardB).toEqual(['another-process']);
    expect((await b.keys!.keySet()).keySet.version).toBe(first + 1);
  });

  it("before startCluster a server's events are for this process alone, and it leads", async () => {
    const events = new ClusterEvents();
    expect(events.shared).toBe(false);
    expect(events.leadership.leader).toBe(true);
  });
});

describe('startCluster', () => {
  it('on PostgreSQL: one replica leads, a CLI process never does, and a key set changed by the CLI reaches the servers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-cluster-start-'));
    const logger = pino({ level: 'silent' });
    const start = async (lead: boolean) => {
      const database = new ToolgateDatabase(pgUrl);
      await database.migrateToLatest();
      const metrics = createMetrics();
      const keys = new KeyStore(dir);
      const cluster = await startCluster({ database, logger, metrics, cluster: new ClusterEvents() }, keys, { lead, leaderRetryMs: 100 });
      cleanups.push(async () => {
        await cluster.close();
        await database.close();
      });
      return { database, metrics, keys, cluster };
    };
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const a = await start(true);
    const b = await start(true);
    const cli = await start(false);
    expect(a.cluster.events.shared).toBe(true);
    expect([a, b, cli].map((r) => r.cluster.leadership.leader)).toEqual([true, false, false]);
    expect(await a.metrics.registry.getSingleMetricAsString('toolgate_cluster_leader')).toMatch(/^toolgate_cluster_leader 1$/m);
    expect(await b.metrics.registry.getSingleMetricAsString('toolgate_cluster_leader')).toMatch(/^toolgate_cluster_leader 0$/m);

    // The first keys were made once, under the keys lock, whichever asked first.
    const [va, vb] = await Promise.all([a.keys.keySet(), b.keys.keySet()]);
    expect(va.keySet.version).toBe(1);
    expect(vb.bytes.equals(va.bytes)).toBe(true);

    const heard: KeySetOrigin[] = [];
    b.keys.onKeySetChanged((o) => heard.push(o));
    await cli.keys.rotate();
    await until(() => heard.length === 1);
    expect(heard).toEqual(['another-process']);
    expect((await b.keys.keySet()).keySet.version).toBe(2);

    // The leader goes; the other server takes over, the CLI still does not.
    await a.cluster.close();
    await until(() => b.cluster.leadership.leader);
    expect(cli.cluster.leadership.leader).toBe(false);
  });

  it('on SQLite: the process leads at once, hears only itself, and opens no PostgreSQL connection', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-cluster-sqlite-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const database = new ToolgateDatabase(join(dir, 'toolgate.db'));
    await database.migrateToLatest();
    const events = new ClusterEvents();
    const cluster = await startCluster(
      { database, logger: pino({ level: 'silent' }), metrics: createMetrics(), cluster: events },
      new KeyStore(join(dir, 'keys')),
    );
    cleanups.push(async () => {
      await cluster.close();
      await database.close();
    });
    expect(cluster.leadership.leader).toBe(true);
    expect(cluster.events.shared).toBe(false);
    // The server's own events, joined: nothing handed them before the start needs replacing.
    expect(cluster.events).toBe(events);
  });
});
