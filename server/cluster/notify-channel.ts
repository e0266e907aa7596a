import pg from 'pg';
import type { Logger } from 'pino';

/** PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more. */
export const MAX_PAYLOAD_BYTES = 7999;
// Notices held while the connection is down; beyond this the oldest go (their effect is also
// reached by the caches' own revalidation).
const MAX_PENDING = 1000;

export type NotifyChannelOptions = {
  url: string;
  channel: string;
  /** Called with each notification's payload on the channel, the sender's own included. */
  onMessage: (payload: string) => void;
  /**
   * Called after the connection came back: notifications sent meanwhile are lost to this process,
   * so whatever it caches from other replicas must be re-read.
   */
  onReconnect?: () => void;
  logger?: Logger;
  /** Wait between reconnection attempts (default 1 s). */
  retryMs?: number;
  /** How the connection shows in pg_stat_activity (default `toolgate-events`). */
  applicationName?: string;
};

/**
 * LISTEN/NOTIFY on one PostgreSQL channel over a dedicated connection (never a pool's: a pooled
 * connection is handed to other queries and LISTEN belongs to the session). The same connection
 * sends this process's notices, in order; while it is down they wait and go out once it is back.
 */
export class NotifyChannel {
  private client: pg.Client | null = null;
  private pending: string[] = [];
  private sending = false;
  private retry: NodeJS.Timeout | undefined;
  private connectedOnce = false;
  private closed = false;
  private idle: (() => void)[] = [];

  constructor(private readonly options: NotifyChannelOptions) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.channel)) throw new Error(`channel ${options.channel} is not a plain lower-case identifier`);
  }

  /** Connects and listens; throws when the first connection fails (the server should not start half-connected). */
  async start(): Promise<void> {
    await this.connect();
  }

  get connected(): boolean {
    return this.client !== null;
  }

  /** Sends a notice to every listener on the channel (after the connection is back, if it is down). */
  notify(payload: string): void {
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) throw new Error(`a notification payload must stay under ${MAX_PAYLOAD_BYTES + 1} bytes`);
    if (this.closed) return;
    this.pending.push(payload);
    if (this.pending.length > MAX_PENDING) this.pending.shift();
    this.flush();
  }

  /** Resolves once every notice handed to notify() so far went out (or could not while disconnected). */
  drained(): Promise<void> {
    if (!this.sending && (this.pending.length === 0 || !this.client)) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Sends what is pending (while connected), stops listening and closes the connection. */
  async close(): Promise<void> {
    await this.drained();
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url, keepAlive: true, application_name: this.options.applicationName ?? 'toolgate-events' });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    client.on('notification', (m) => {
      if (m.channel !== this.options.channel || m.payload === undefined) return;
      try {
        this.options.onMessage(m.payload);
      } catch (err) {
        // A receiver's failure must not break the connection every other notice arrives on.
        this.options.logger?.error({ err: { message: (err as Error).message } }, 'cluster events: a notice could not be applied');
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    if (this.connectedOnce) {
      this.options.logger?.info({ channel: this.options.channel }, 'cluster events: listening again');
      this.options.onReconnect?.();
    }
    this.connectedOnce = true;
    this.flush();
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.client !== client) return;
    this.client = null;
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.options.logger?.warn(
      { channel: this.options.channel, err: err ? { message: err.message } : undefined },
      'cluster events: connection lost; reconnecting',
    );
    this.reconnectLater();
  }

  private reconnectLater(): void {
    if (this.retry || this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connect().catch((err: Error) => {
        this.options.logger?.warn({ channel: this.options.channel, err: { message: err.message } }, 'cluster events: cannot reconnect yet');
        this.reconnectLater();
      });
    }, this.options.retryMs ?? 1000);
    this.retry.unref();
  }

  private flush(): void {
    if (this.sending) return;
    this.sending = true;
    void (async () => {
      try {
        while (this.pending.length && this.client) {
          const client = this.client;
          // Everything pending goes in one round trip; notices keep their order.
          const batch = this.pending.splice(0, 64);
          const calls = batch.map((_, i) => `pg_notify($1, $${i + 2})`).join(', ');
          try {
            await client.query(`SELECT ${calls}`, [this.options.channel, ...batch]);
          } catch (err) {
            if (err instanceof pg.DatabaseError) {
              // The server answered, refusing the notices themselves: sending them again cannot help.
              this.options.logger?.error({ err: { message: err.message } }, 'cluster events: notices refused');
            } else {
              // The connection failed under them: they go out again once it is back.
              this.pending.unshift(...batch);
              if (this.client === client) this.lost(client, err as Error);
            }
          }
        }
      } finally {
        this.sending = false;
        if (this.pending.length === 0 || !this.client) for (const resolve of this.idle.splice(0)) resolve();
        else this.flush();
      }
    })();
  }
}
