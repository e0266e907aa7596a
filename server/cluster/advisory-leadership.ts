import pg from 'pg';
import type { Logger } from 'pino';
import type { Leadership } from './leadership.ts';

// The advisory-lock key replicas compete for ("tgleader" in ASCII); other keys, such as the write
// lock, are different numbers in the same space.
export const LEADER_LOCK_KEY = 0x74676c6561646572n;
/** Default wait between attempts to take the lock (and between checks that it is still held). */
export const LEADER_RETRY_MS = 5000;
const MIN_PATIENCE_MS = 5000;

export type AdvisoryLeadershipOptions = { url: string; key?: bigint; retryMs?: number; logger?: Logger };

/**
 * Leadership through a session-level advisory lock held on a dedicated connection: the replica
 * whose `pg_try_advisory_lock` succeeds leads for as long as that connection lives. A process that
 * dies (even by SIGKILL) drops its connection and so the lock, and another replica's next attempt,
 * within `retryMs`, takes over. While leading, the same interval checks the connection; a
 * connection that fails or stops answering ends leadership here before anything else runs.
 */
export class AdvisoryLockLeadership implements Leadership {
  private client: pg.Client | null = null;
  private isLeader = false;
  private readonly listeners = new Set<(leader: boolean) => void>();
  private timer: NodeJS.Timeout | undefined;
  private attempt: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly key: bigint;
  private readonly retryMs: number;

  constructor(private readonly options: AdvisoryLeadershipOptions) {
    this.key = options.key ?? LEADER_LOCK_KEY;
    this.retryMs = options.retryMs ?? LEADER_RETRY_MS;
  }

  get leader(): boolean {
    return this.isLeader;
  }

  onChange(listener: (leader: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Makes the first attempt (awaited) and keeps trying every `retryMs`. */
  async start(): Promise<void> {
    await this.tryOnce();
    this.timer = setInterval(() => void this.tryOnce(), this.retryMs);
    this.timer.unref();
  }

  /** Gives leadership up (listeners hear it first) and closes the connection, releasing the lock. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.attempt;
    this.set(false);
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }

  private tryOnce(): Promise<void> {
    // Attempts never overlap: one slow answer must not stack connections.
    this.attempt = this.attempt.then(async () => {
      if (this.closed) return;
      try {
        const client = this.client ?? (await this.connect());
        if (this.isLeader) {
          await client.query('SELECT 1');
          return;
        }
        const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [String(this.key)]);
        if (r.rows[0]?.ok && !this.closed && this.client === client) {
          this.options.logger?.info('leadership taken: this replica runs the background jobs');
          this.set(true);
        }
      } catch (err) {
        this.drop(err as Error);
      }
    });
    return this.attempt;
  }

  private async connect(): Promise<pg.Client> {
    // A check that takes this long counts as a lost connection (never shorter than a busy server may need).
    const patience = Math.max(this.retryMs, MIN_PATIENCE_MS);
    const client = new pg.Client({
      connectionString: this.options.url,
      keepAlive: true,
      application_name: 'toolgate-leader',
      connectionTimeoutMillis: patience,
      query_timeout: patience,
    });
    client.on('error', (err) => {
      if (this.client === client) this.drop(err);
    });
    client.on('end', () => {
      if (this.client === client) this.drop(new Error('connection ended'));
    });
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    return client;
  }

  private drop(err: Error): void {
    const client = this.client;
    this.client = null;
    if (client) void client.end().catch(() => undefined);
    if (this.isLeader) this.options.logger?.warn({ err: { message: err.message } }, 'leadership lost with the database connection');
    this.set(false);
  }

  private set(leader: boolean): void {
    if (this.isLeader === leader) return;
    this.isLeader = leader;
    for (const listener of [...this.listeners]) listener(leader);
  }
}
