import type { McpServer, Tool } from '../../policy-schemas/types.gen.ts';
import { type Change, type ChangeMeta, runChange } from '../audit/change.ts';
import type { AppDeps } from '../context.ts';
import { nextTurn } from '../http/event-loop.ts';
import { type Stored, stripStored } from '../store/document-store.ts';
import { mcpServerStore, toolStore } from '../store/inventory.ts';
import { checkInputSchema } from '../validation/input-schema.ts';
import type { McpClientOptions, McpResult, OfferedTool } from './client.ts';
import { reconcileTools } from './reconcile.ts';
import { CLOSED_MCP_POLICY, type McpTransportPolicy } from './transport-policy.ts';

/** The operator's MCP transport policy from the server's config (closed when not configured). */
export function mcpPolicyOf(config: AppDeps['config']): McpTransportPolicy {
  return config.mcp ?? CLOSED_MCP_POLICY;
}

export type SyncDeps = Pick<AppDeps, 'database' | 'metrics' | 'config' | 'cluster'>;

/** How a sync reaches the server: by default a fresh connection per sync. */
export type ToolLister = (server: McpServer) => Promise<McpResult<OfferedTool[]>>;

export type SyncOptions = {
  /** Client options (timeouts, environment) for the default lister; the policy is the server's config. */
  client?: Omit<McpClientOptions, 'policy'>;
  /** Lists the tools some other way, e.g. over a connection the scheduler keeps open. */
  list?: ToolLister;
  /** Injected clock for tests. */
  now?: () => Date;
  /**
   * Write nothing when nothing changed since the last recorded sync (same failure, or no tool
   * change and the same rejected/flagged report): periodic re-syncs do not flood the audit log.
   */
  quietWhenUnchanged?: boolean;
};

export type SyncOutcome =
  | { ok: true; server: Stored<McpServer>; flagged: Array<{ id: string; problems: Array<{ pointer: string; message: string }> }> }
  | { ok: false; code: 'not_found'; message: string }
  | { ok: false; code: 'mcp_error'; message: string; server: Stored<McpServer> };

/**
 * Syncs one MCP server: lists its tools (outside any transaction), then writes every tool change,
 * one audit event per changed tool and the server's `lastSync` in ONE transaction. A server that
 * cannot be listed leaves the inventory as it was; only its `lastSync` records the failure.
 */
export async function syncMcpServer(deps: SyncDeps, id: string, meta: ChangeMeta, options: SyncOptions = {}): Promise<SyncOutcome> {
  const server = await mcpServerStore.get(deps.database.db, id);
  if (!server) return { ok: false, code: 'not_found', message: `MCP server ${id} does not exist` };
  // The MCP SDK (and zod, undici) load on the first sync, not with every server start.
  const list =
    options.list ?? (async (s: McpServer) => (await import('./client.ts')).fetchMcpTools(s, { ...options.client, policy: mcpPolicyOf(deps.config) }));
  const listed = await list(stripStored(server));
  const now = (options.now ?? (() => new Date()))().toISOString();

  if (!listed.ok) {
    const saved = await runChange(deps, meta, async (ch) => {
      const current = await mcpServerStore.get(ch.tx, id);
      if (!current) return undefined;
      if (options.quietWhenUnchanged && current.lastSync?.ok === false && current.lastSync.error === listed.message) return current;
      return writeLastSync(ch.tx, current, { at: now, ok: false, error: listed.message }, now, ch.record);
    });
    if (!saved) return { ok: false, code: 'not_found', message: `MCP server ${id} does not exist` };
    return { ok: false, code: 'mcp_error', message: listed.message, server: saved };
  }

  const verdicts = await judgeOffered(id, listed.value, await toolStore.list(deps.database.db));
  return runChange(deps, meta, async (ch) => {
    const current = await mcpServerStore.get(ch.tx, id);
    if (!current) return { ok: false as const, code: 'not_found' as const, message: `MCP server ${id} was deleted during the sync` };
    const existing = await toolStore.list(ch.tx);
    const checkInputSchema = (schema: Record<string, unknown>) => verdicts.get(schema) ?? safeCheck(schema);
    const result = reconcileTools({ serverId: id, offered: listed.value, existing, now, checkInputSchema });
    const flagged = result.flagged.map((f) => ({ name: f.id, message: f.problems.map((p) => `${p.pointer}: ${p.message}`).join('; ') }));
    if (options.quietWhenUnchanged && result.changes.length === 0 && sameReport(current.lastSync, result.rejected, flagged)) {
      return { ok: true as const, server: current, flagged: result.flagged };
    }
    for (const change of result.changes) {
      const after = stripStored(change.after as Stored<Tool>);
      if (change.before === null) {
        await toolStore.insert(ch.tx, after.id, after, now);
        await ch.record({ action: 'sync', entityType: 'tool', entityId: after.id, before: null, after });
      } else {
        const before = change.before as Stored<Tool>;
        const stored = await toolStore.update(ch.tx, after.id, after, before.version, before.createdAt, now);
        // Cannot happen inside the transaction that read it; refuse rather than overwrite.
        if (!stored) throw new Error(`tool ${after.id} changed during the sync`);
        await ch.record({ action: 'sync', entityType: 'tool', entityId: after.id, before: stripStored(before), after });
      }
    }
    const lastSync: NonNullable<McpServer['lastSync']> = {
      at: now,
      ok: true,
      added: result.added,
      changed: result.changed,
      removed: result.removed,
      rejected: result.rejected,
      flagged,
    };
    const saved = await writeLastSync(ch.tx, current, lastSync, now, ch.record);
    return { ok: true as const, server: saved, flagged: result.flagged };
  });
}

function sameReport(last: McpServer['lastSync'], rejected: unknown[], flagged: unknown[]): boolean {
  if (!last?.ok) return false;
  return JSON.stringify(last.rejected ?? []) === JSON.stringify(rejected) && JSON.stringify(last.flagged ?? []) === JSON.stringify(flagged);
}

type SchemaVerdict = Array<{ pointer: string; message: string }>;

/** How long schema judging holds the event loop before other requests get a turn. */
const JUDGE_SLICE_MS = 20;

/**
 * The verdicts on the input schemas the server offers that are new or differ from the stored ones
 * (reconcile judges only a changed definition; one that changed since this read is judged there),
 * judged before the sync's transaction and a slice at a time: a server of thousands of tools
 * neither holds the transaction nor keeps other requests waiting while they are judged.
 */
async function judgeOffered(serverId: string, offered: OfferedTool[], stored: Tool[]): Promise<Map<object, SchemaVerdict>> {
  const storedSchemas = new Map<string, string>();
  for (const t of stored) {
    if (t.source?.kind === 'mcp' && t.source.server === serverId && t.source.originalName !== undefined) {
      storedSchemas.set(t.source.originalName, JSON.stringify(t.inputSchema));
    }
  }
  const verdicts = new Map<object, SchemaVerdict>();
  let sliceStart = performance.now();
  for (const offer of offered) {
    if (verdicts.has(offer.inputSchema) || storedSchemas.get(offer.name) === JSON.stringify(offer.inputSchema)) continue;
    verdicts.set(offer.inputSchema, safeCheck(offer.inputSchema));
    if (performance.now() - sliceStart > JUDGE_SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  return verdicts;
}

/**
 * The dialect's judge (which compiles, in the runtime's own ajv, whatever it cannot vouch for); a
 * problem is flagged, never a failed sync.
 */
function safeCheck(schema: Record<string, unknown>): SchemaVerdict {
  try {
    return checkInputSchema(schema);
  } catch (err) {
    return [{ pointer: '/inputSchema', message: `does not compile: ${err instanceof Error ? err.message : String(err)}` }];
  }
}

async function writeLastSync(
  tx: Change['tx'],
  current: Stored<McpServer>,
  lastSync: NonNullable<McpServer['lastSync']>,
  now: string,
  record: Change['record'],
): Promise<Stored<McpServer>> {
  const before = stripStored(current);
  const after: McpServer = { ...before, lastSync };
  const saved = await mcpServerStore.update(tx, current.id, after, current.version, current.createdAt, now);
  if (!saved) throw new Error(`MCP server ${current.id} changed during the sync`);
  await record({ action: 'sync', entityType: 'mcp-server', entityId: current.id, before, after });
  return saved;
}
