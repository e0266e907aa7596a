import { parseArgs } from 'node:util';
import { ClusterEvents } from '../../cluster/cluster-events.ts';
import { ToolgateDatabase } from '../../db/database.ts';
import { syncMcpServer } from '../../mcp/sync.ts';
import { createMetrics } from '../../observability/metrics.ts';
import { type Settings, settingsFromEnv } from '../../startup.ts';
import type { AppConfig } from '../../context.ts';
import { type Output, consoleOutput } from '../output.ts';

/** The parts of the server's config a sync reads, from the same environment `serve` reads. */
function cliConfig(s: Settings): AppConfig {
  return {
    keysDir: s.keysDir,
    webDir: null,
    sessionTtlSeconds: 0,
    secureCookies: false,
    mcp: { commands: s.mcpCommands ?? [], allowHosts: s.mcpAllowHosts ?? [] },
  };
}

const USAGE = 'usage: toolgate mcp sync ID [--timeout MS] [--reason TEXT]';

/**
 * `toolgate mcp sync ID`: the same sync as `POST /v1/mcp-servers/:id/sync`, against TOOLGATE_DB,
 * audited as `system`. Exit 0 on success, 1 when the server cannot be listed or does not exist.
 */
export async function run(args: string[], out: Output = consoleOutput): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'sync') {
    out.error(USAGE);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, allowPositionals: true, options: { timeout: { type: 'string' }, reason: { type: 'string' } } });
  } catch (err) {
    out.error(`toolgate mcp sync: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const { positionals, values } = parsed;
  if (positionals.length !== 1) {
    out.error(USAGE);
    return 2;
  }
  const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
    out.error('toolgate mcp sync: --timeout must be a positive number of milliseconds');
    return 2;
  }

  const id = positionals[0];
  const settings = settingsFromEnv();
  const database = new ToolgateDatabase(settings.dbFile);
  try {
    await database.migrateToLatest();
    const outcome = await syncMcpServer(
      // A command on its own: no server's cluster events to tell.
      { database, metrics: createMetrics(), config: cliConfig(settings), cluster: new ClusterEvents() },
      id,
      { actor: 'system', requestId: null, reason: values.reason ?? 'toolgate mcp sync' },
      { client: { timeoutMs } },
    );
    if (!outcome.ok) {
      out.error(`toolgate mcp sync: ${outcome.message}`);
      return 1;
    }
    const s = outcome.server.lastSync;
    const line = (label: string, items: string[] | undefined) => out.log(`${label.padEnd(9)}${items?.length ? items.join(', ') : '-'}`);
    out.log(`synced MCP server ${id}`);
    line('added', s?.added);
    line('changed', s?.changed);
    line('removed', s?.removed);
    line(
      'rejected',
      s?.rejected?.map((r) => `${r.name} (${r.message})`),
    );
    line(
      'flagged',
      s?.flagged?.map((r) => `${r.name} (${r.message})`),
    );
    if ((s?.added?.length ?? 0) + (s?.changed?.length ?? 0) > 0) out.log('new and changed tools are quarantined until approved: POST /v1/tools/:id/approve');
    return 0;
  } finally {
    await database.close();
  }
}
