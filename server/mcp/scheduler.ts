import type { McpServer } from '../../policy-schemas/types.gen.ts';
import type { AppDeps } from '../context.ts';
import { mcpServerStore } from '../store/inventory.ts';
import type { McpClientOptions, McpSession } from './client.ts';
import { mcpPolicyOf, syncMcpServer } from './sync.ts';

export type SchedulerDeps = Pick<AppDeps, 'database' | 'metrics' | 'logger' | 'config' | 'cluster'>;

export type SchedulerOptions = {
  /** How often the server list is re-read to pick up created, edited and deleted servers (default 15 s). */
  refreshMs?: number;
  /** Notifications arriving within this window cause one sync (default 500 ms). */
  debounceMs?: number;
  /** Milliseconds per `syncIntervalSeconds` unit (default 1000; tests shrink it). */
  msPerSecond?: number;
  client?: Pick<McpClientOptions, 'timeoutMs' | 'env'>;
};

/**
 * Keeps servers that have `syncIntervalSeconds` in sync: one connection held open per server,
 * re-synced every interval and on `notifications/tools/list_changed`, with the same
 * reconciliation as an on-demand sync (audited as `system`). Returns a function that stops it.
 *
 * @example
 *   const stopMcp = startMcpScheduler(deps);
 *   // on shutdown
 *   await stopMcp();
 */
export function startMcpScheduler(deps: SchedulerDeps, options: SchedulerOptions = {}): () => Promise<void> {
  const refreshMs = options.refreshMs ?? 15_000;
  const watchers = new Map<string, Watcher>();
  let stopped = false;
  let refreshing: Promise<void> = Promise.resolve();

  const refresh = async () => {
    let servers: McpServer[];
    try {
      servers = await mcpServerStore.list(deps.database.db);
    } catch (err) {
      deps.logger.error({ err: errInfo(err) }, 'mcp scheduler: cannot read the MCP servers');
      return;
    }
    if (stopped) return;
    const wanted = new Map(servers.filter((s) => s.syncIntervalSeconds !== undefined).map((s) => [s.id, s]));
    for (const [id, w] of watchers) {
      const s = wanted.get(id);
      if (!s || fingerprint(s) !== w.fingerprint) {
        watchers.delete(id);
        await w.stop();
      }
    }
    for (const [id, s] of wanted) {
      if (watchers.has(id) || stopped) continue;
      const w = new Watcher(deps, s, options);
      watchers.set(id, w);
      w.start();
    }
  };

  const tick = () => {
    refreshing = refreshing.then(refresh);
  };
  tick();
  const timer = setInterval(tick, refreshMs);
  timer.unref();

  return async () => {
    stopped = true;
    clearInterval(timer);
    await refreshing;
    await Promise.all([...watchers.values()].map((w) => w.stop()));
    watchers.clear();
  };
}

/** What, when changed, means the connection must be rebuilt. */
function fingerprint(s: McpServer): string {
  return JSON.stringify([s.transport, s.syncIntervalSeconds]);
}

class Watcher {
  readonly fingerprint: string;
  private session: McpSession | null = null;
  private timer: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private pending: string | null = null;
  private stopped = false;

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly server: McpServer,
    private readonly options: SchedulerOptions,
  ) {
    this.fingerprint = fingerprint(server);
  }

  start(): void {
    this.request('scheduled re-sync (start)');
    const every = (this.server.syncIntervalSeconds ?? 0) * (this.options.msPerSecond ?? 1000);
    this.timer = setInterval(() => this.request('scheduled re-sync'), every);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.debounce);
    this.pending = null;
    // Closing first ends a request in flight instead of waiting for its timeout.
    await this.closeSession(false);
    await this.running;
    await this.closeSession(false);
  }

  private onListChanged(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.request('tools/list_changed'), this.options.debounceMs ?? 500);
    this.debounce.unref();
  }

  /** Runs one sync now, or once more after the running one (requests coalesce). */
  private request(reason: string): void {
    if (this.stopped) return;
    if (this.running) {
      this.pending = reason;
      return;
    }
    this.running = this.syncOnce(reason).finally(() => {
      this.running = null;
      const next = this.pending;
      this.pending = null;
      if (next) this.request(next);
    });
  }

  private async syncOnce(reason: string): Promise<void> {
    const { id } = this.server;
    try {
      const outcome = await syncMcpServer(
        this.deps,
        id,
        { actor: 'system', requestId: null, reason },
        {
          quietWhenUnchanged: true,
          list: async (server) => {
            if (!this.session) {
              let mine: McpSession | null = null;
              // Loaded on the first sync: the MCP SDK is not part of every server start.
              const { openMcpSession } = await import('./client.ts');
              const opened = await openMcpSession(server, {
                ...this.options.client,
                policy: mcpPolicyOf(this.deps.config),
                onToolsChanged: () => this.onListChanged(),
                onClose: () => {
                  if (this.session === mine) this.session = null;
                },
              });
              if (!opened.ok) return opened;
              mine = opened.value;
              if (this.stopped) {
                await opened.value.close();
                throw new StoppedError();
              }
              this.session = opened.value;
            }
            const listed = await this.session.listTools();
            if (this.stopped) throw new StoppedError();
            // A connection that failed once is rebuilt on the next attempt.
            if (!listed.ok) await this.closeSession(true);
            return listed;
          },
        },
      );
      if (outcome.ok) {
        const s = outcome.server.lastSync;
        this.deps.logger.info(
          { server: id, reason, added: s?.added?.length ?? 0, changed: s?.changed?.length ?? 0, removed: s?.removed?.length ?? 0 },
          'mcp sync',
        );
      } else {
        this.deps.logger.warn({ server: id, reason, error: outcome.message }, 'mcp sync failed');
      }
    } catch (err) {
      // Stopping mid-sync abandons it before anything is written.
      if (err instanceof StoppedError) return;
      this.deps.logger.error({ server: id, reason, err: errInfo(err) }, 'mcp sync failed');
    }
  }

  private async closeSession(force: boolean): Promise<void> {
    const s = this.session;
    this.session = null;
    if (s) await s.close(force);
  }
}

class StoppedError extends Error {}

function errInfo(err: unknown): { name?: string; message: string } {
  return err instanceof Error ? { name: err.name, message: err.message } : { message: String(err) };
}
