import { Counter, Gauge } from 'prom-client';
import type { AppDeps } from '../context.ts';
import type { KeyStore } from '../signing/key-store.ts';
import { CLUSTER_CHANNEL, type ClusterEvents } from './cluster-events.ts';
import { type Leadership, NeverLeader, SoleLeader } from './leadership.ts';
import type { NotifyChannel } from './notify-channel.ts';

export type Cluster = {
  events: ClusterEvents;
  leadership: Leadership;
  /** Stops leading (jobs must be stopped first), sends what is pending and closes the connections. */
  close(): Promise<void>;
};

export type ClusterOptions = {
  /** Wait between attempts to take leadership (default 5 s). */
  leaderRetryMs?: number;
  /**
   * False for a process that only changes things and exits (the CLI): it sends and hears events
   * and takes the keys lock, but never competes for leadership (it would hold the jobs back).
   */
  lead?: boolean;
};

/**
 * Joins this server process to the others on its database. On SQLite the process is alone: events
 * stay in-process and it always leads. On PostgreSQL it listens for the other replicas' events on
 * a dedicated connection, competes for leadership on another, and changes the shared keys
 * directory only while holding an advisory lock. Exposes `toolgate_cluster_leader` in the metrics.
 * The events are the server's own (`deps.cluster`, made with its context): they are joined to the
 * other replicas here, not replaced, so whatever was handed them keeps working.
 */
export async function startCluster(
  deps: Pick<AppDeps, 'database' | 'logger' | 'metrics' | 'cluster'>,
  keys: KeyStore,
  options: ClusterOptions = {},
): Promise<Cluster> {
  const { database, logger } = deps;
  const url = database.engine === 'postgres' ? database.url : null;
  const events = deps.cluster;
  let channel: NotifyChannel | null = null;
  let leadership: Leadership;
  if (!url) {
    leadership = new SoleLeader();
    events.connect({ leadership, channel: null });
  } else {
    // Loaded only here, as the database wrapper loads pg: a SQLite server never pays for it.
    const [{ NotifyChannel }, { AdvisoryLockLeadership }, { KEYS_LOCK_KEY, advisoryLock }] = await Promise.all([
      import('./notify-channel.ts'),
      import('./advisory-leadership.ts'),
      import('./advisory-lock.ts'),
    ]);
    let receiver: ClusterEvents | undefined;
    channel = new NotifyChannel({
      url,
      channel: CLUSTER_CHANNEL,
      logger,
      // Nothing is received before the events are joined to the channel (below).
      onMessage: (payload) => receiver?.receive(payload),
      onReconnect: () => receiver?.resync(),
    });
    await channel.start();
    const advisory = options.lead === false ? null : new AdvisoryLockLeadership({ url, logger, retryMs: options.leaderRetryMs });
    leadership = advisory ?? new NeverLeader();
    // What other replicas told this one: operators (and the replica tests) see the channel works.
    const received = new Counter({
      name: 'toolgate_cluster_notices_received_total',
      help: 'Notices from other replicas applied here, by type (published, tokens-changed, tenant-removed, keyset-changed, audit-appended)',
      labelNames: ['type'],
      registers: [deps.metrics.registry],
    });
    events.connect({ leadership, channel, onApplied: (type) => received.inc({ type }) });
    receiver = events;
    keys.setCrossProcessLock(advisoryLock(url, KEYS_LOCK_KEY));
    await advisory?.start();
    // A replica (re)starting may have rotated the bootstrap admin token: other replicas drop cached lookups.
    events.announce({ type: 'tokens-changed' });
  }
  events.followKeys(keys);
  new Gauge({
    name: 'toolgate_cluster_leader',
    help: '1 while this replica runs the background jobs (re-issue, MCP re-sync, audit checkpoints, decision retention)',
    registers: [deps.metrics.registry],
    collect() {
      this.set(leadership.leader ? 1 : 0);
    },
  });
  return {
    events,
    leadership,
    async close() {
      await leadership.close();
      await events.close();
      // A closed cluster sends nothing more; the events still apply here what this process announces.
      events.connect({ leadership, channel: null });
      await channel?.close();
      keys.setCrossProcessLock(undefined);
    },
  };
}
