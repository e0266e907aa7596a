import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ListToolsResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '../../policy-schemas/types.gen.ts';
import { plainJson } from '../http/safe-json.ts';
import { DestinationRefused, guardedFetch } from './guarded-fetch.ts';
import { type McpTransportPolicy, transportProblems } from './transport-policy.ts';

/** A tool as an MCP server offers it in `tools/list`, reduced to what Toolgate keeps. */
export type OfferedTool = {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /** The server's own claims about the tool (MCP annotations): hints for the admin, never trusted. */
  annotations?: ToolHints;
};

/** The boolean MCP tool annotations Toolgate keeps to show an admin. */
export type ToolHints = { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

export type McpResult<T> = { ok: true; value: T } | { ok: false; code: 'mcp_error'; message: string };

export type McpClientOptions = {
  /** What the operator lets a transport reach (checked again here, whatever was checked at save). */
  policy: McpTransportPolicy;
  /** Limit for connecting and for each request, in ms (default `TOOLGATE_MCP_TIMEOUT_MS`, else 20 s). */
  timeoutMs?: number;
  /** Where named environment variables are read from at connect time (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Called when a connected server sends `notifications/tools/list_changed`. */
  onToolsChanged?: () => void;
  /** Called once when an open session's connection ends on its own. */
  onClose?: (reason: string) => void;
};

/** An open connection to one MCP server. */
export type McpSession = {
  listTools(): Promise<McpResult<OfferedTool[]>>;
  /** Disconnects; `force` stops a stdio server at once instead of letting it exit on its own. */
  close(force?: boolean): Promise<void>;
};

export const DEFAULT_MCP_TIMEOUT_MS = 20_000;
/** How many tools/list pages an import follows: a server that pages on past it fails the sync. */
export const MAX_TOOL_LIST_PAGES = 200;
/** How many tools an import takes from one server (over all pages). */
export const MAX_OFFERED_TOOLS = 5_000;
const STDERR_TAIL = 600;

type TransportConfig = McpServer['transport'];

/**
 * Connects to an MCP server, lists all of its tools (every page) and disconnects.
 * Never throws: a server that fails to start, times out or answers garbage gives an error naming it.
 */
export async function fetchMcpTools(server: Pick<McpServer, 'id' | 'transport'>, options: McpClientOptions): Promise<McpResult<OfferedTool[]>> {
  const opened = await openMcpSession(server, { ...options, onToolsChanged: undefined, onClose: undefined });
  if (!opened.ok) return opened;
  const listed = await opened.value.listTools();
  await opened.value.close(!listed.ok);
  return listed;
}

/** Opens a connection that stays up (for list_changed notifications) until `close()`. Never throws. */
export async function openMcpSession(server: Pick<McpServer, 'id' | 'transport'>, options: McpClientOptions): Promise<McpResult<McpSession>> {
  const timeout = options.timeoutMs ?? configuredTimeout();
  const env = options.env ?? process.env;
  const refused = transportProblems(server.transport, options.policy);
  if (refused.length > 0) {
    return {
      ok: false,
      code: 'mcp_error',
      message: `MCP server "${server.id}" is not allowed to connect: ${refused.map((p) => `${p.pointer} ${p.message}`).join('; ')}`,
    };
  }
  const secrets = secretValues(server.transport, env);
  const http = server.transport.kind === 'http';
  // Over http nothing the remote says is kept in an error (its body could be any internal page).
  const failure = (phase: Phase, err: unknown, tail: string) =>
    http
      ? fixedFailure(server.id, phase, err, timeout)
      : fail(server.id, `${phase === 'tools/list' ? 'tools/list failed' : 'failed to start or initialize'}: ${explain(err, timeout)}`, tail, secrets);
  let stderrTail = '';
  let transport: Transport;
  let closeFetch: () => Promise<void> = async () => undefined;
  try {
    transport = makeTransport(
      server.transport,
      env,
      options.policy,
      (chunk) => {
        // Mask before cutting: a cut could otherwise split a secret so that exact matching misses it.
        stderrTail = clipEnd(maskSecrets(stderrTail + chunk, secrets), STDERR_TAIL, secrets);
      },
      (close) => (closeFetch = close),
    );
  } catch (err) {
    return http ? fixedFailure(server.id, 'configure', err, timeout) : fail(server.id, `cannot be configured: ${describe(err)}`, '', secrets);
  }

  const client = new Client({ name: 'toolgate', version: '1' }, { capabilities: {} });
  let closedByUs = false;
  let rejectBroken: ((err: Error) => void) | undefined;
  const broken = new Promise<never>((_, reject) => {
    rejectBroken = reject;
  });
  broken.catch(() => undefined);
  client.onerror = (err) => {
    rejectBroken?.(new TransportError(err));
  };
  client.onclose = () => {
    if (!closedByUs) {
      rejectBroken?.(new ClosedError());
      options.onClose?.('connection closed');
    }
  };

  // The SDK forgets the child when it closes the transport itself (as it does when initialize
  // fails), so the pid is kept from the moment of spawning.
  let childPid: number | null = null;
  if (transport instanceof StdioClientTransport) {
    const stdio = transport;
    const start = stdio.start.bind(stdio);
    stdio.start = async () => {
      await start();
      childPid = stdio.pid;
    };
  }

  const close = async (force = false) => {
    if (closedByUs) return;
    closedByUs = true;
    // A server that misbehaved is not given the SDK's grace period.
    if (force && childPid !== null) signal(childPid, 'SIGTERM');
    // The SDK's shutdown timers do not hold the event loop: hold it, or a short-lived process
    // (the CLI, a test worker) could exit first and leave the server running.
    const hold = setInterval(() => undefined, 250);
    try {
      await client.close();
    } catch {
      // Closing a half-started transport can fail; the pid check below still applies.
    } finally {
      clearInterval(hold);
    }
    await closeFetch().catch(() => undefined);
    if (childPid !== null && isAlive(childPid)) signal(childPid, 'SIGKILL');
  };

  try {
    await Promise.race([client.connect(transport, { timeout }), broken]);
  } catch (err) {
    await close(true);
    return failure('initialize', err, stderrTail);
  }

  if (options.onToolsChanged) {
    const notify = options.onToolsChanged;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => notify());
  }

  const listTools = async (): Promise<McpResult<OfferedTool[]>> => {
    const tools: OfferedTool[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    try {
      for (let page = 0; ; page++) {
        if (page >= MAX_TOOL_LIST_PAGES) return listingRefused(server.id, 'too_many_pages', MAX_TOOL_LIST_PAGES);
        // The raw request skips Client.listTools' output-schema caching, which can throw on odd schemas.
        const result = await Promise.race([
          client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ListToolsResultSchema, { timeout }),
          broken,
        ]);
        // Whatever the server says is masked before anyone (store, log, audit, bundle) sees it.
        for (const t of result.tools) tools.push(maskDeep(toOffered(t), secrets));
        if (tools.length > MAX_OFFERED_TOOLS) return listingRefused(server.id, 'too_many_tools', MAX_OFFERED_TOOLS);
        const next = result.nextCursor;
        if (next === undefined || next === '') break;
        if (seenCursors.has(next)) return listingRefused(server.id, 'cursor_repeated');
        seenCursors.add(next);
        cursor = next;
      }
    } catch (err) {
      return failure('tools/list', err, stderrTail);
    }
    return { ok: true, value: tools };
  };

  return { ok: true, value: { listTools, close } };
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `TOOLGATE_MCP_TIMEOUT_MS` when set to a positive number, else 20 s. */
function configuredTimeout(): number {
  const v = Number(process.env.TOOLGATE_MCP_TIMEOUT_MS);
  return Number.isFinite(v) && v > 0 ? v : DEFAULT_MCP_TIMEOUT_MS;
}

class TransportError extends Error {
  constructor(readonly original: unknown) {
    super(describe(original));
  }
}
class ClosedError extends Error {}

function makeTransport(
  t: TransportConfig,
  env: Record<string, string | undefined>,
  policy: McpTransportPolicy,
  onStderr: (chunk: string) => void,
  onFetch: (close: () => Promise<void>) => void,
): Transport {
  if (t.kind === 'http') {
    const guarded = guardedFetch(policy);
    onFetch(guarded.close);
    return new StreamableHTTPClientTransport(new URL(t.url), { fetch: guarded.fetch });
  }
  // Only the named variables are passed (the SDK adds its short list of safe defaults, PATH among them).
  const childEnv: Record<string, string> = {};
  for (const name of t.env ?? []) {
    const value = env[name];
    if (value !== undefined) childEnv[name] = value;
  }
  if (env.PATH !== undefined) childEnv.PATH = env.PATH;
  const transport = new StdioClientTransport({ command: t.command, args: t.args ?? [], env: childEnv, stderr: 'pipe' });
  transport.stderr?.on('data', (chunk: Buffer | string) => onStderr(String(chunk)));
  return transport;
}

function secretValues(t: TransportConfig, env: Record<string, string | undefined>): string[] {
  if (t.kind !== 'stdio') return [];
  const values = (t.env ?? []).map((n) => env[n]).filter((v): v is string => v !== undefined && v.length >= 3);
  // Longest first: a value inside another (a password inside a connection URL) masked first would
  // leave the rest of the longer one in clear around its `***`.
  return [...new Set(values)].sort((a, b) => b.length - a.length);
}

function toOffered(t: {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}): OfferedTool {
  // The SDK's zod parse may have assigned keys such as __proto__: keep only what JSON text holds.
  const out: OfferedTool = { name: t.name, inputSchema: plainJson(t.inputSchema) };
  if (t.description !== undefined) out.description = t.description;
  if (t.outputSchema !== undefined) out.outputSchema = plainJson(t.outputSchema);
  const hints: ToolHints = {};
  for (const h of HINTS) if (typeof t.annotations?.[h] === 'boolean') hints[h] = t.annotations[h] as boolean;
  if (Object.keys(hints).length > 0) out.annotations = hints;
  return out;
}

/** A copy with every passed-through value masked in every string and every object key. */
export function maskDeep<T>(value: T, secrets: string[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return maskSecrets(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      // defineProperty: a key named `__proto__` stays a key, as it was in the server's JSON.
      for (const [k, child] of Object.entries(v))
        Object.defineProperty(out, maskSecrets(k, secrets), { value: walk(child), enumerable: true, writable: true, configurable: true });
      return out;
    }
    return v;
  };
  return walk(value) as T;
}

type Phase = 'configure' | 'initialize' | 'tools/list';

/**
 * The error of a failed http connection in a fixed form (phase, code, HTTP status): never the
 * remote's body or headers, which could be an internal endpoint's answer.
 */
function fixedFailure(serverId: string, phase: Phase, err: unknown, timeout: number): { ok: false; code: 'mcp_error'; message: string } {
  const { code, status } = classify(err, timeout);
  return {
    ok: false,
    code: 'mcp_error',
    message: `MCP server "${serverId}" failed (phase: ${phase}, code: ${code}${status === undefined ? '' : `, status: ${status}`})`,
  };
}

/**
 * A listing stopped at one of the import's bounds, in the fixed form of every failed sync: nothing
 * the server said (its cursor, its tools) is in it, whatever the transport.
 */
function listingRefused(
  serverId: string,
  code: 'too_many_pages' | 'too_many_tools' | 'cursor_repeated',
  limit?: number,
): { ok: false; code: 'mcp_error'; message: string } {
  return {
    ok: false,
    code: 'mcp_error',
    message: `MCP server "${serverId}" failed (phase: tools/list, code: ${code}${limit === undefined ? '' : `, limit: ${limit}`})`,
  };
}

function classify(err: unknown, timeout: number): { code: string; status?: number } {
  const chain: unknown[] = [];
  for (let e: unknown = err, i = 0; e && i < 6; e = (e as { cause?: unknown; original?: unknown }).original ?? (e as { cause?: unknown }).cause, i++)
    chain.push(e);
  if (chain.some((e) => e instanceof DestinationRefused || (e as { code?: unknown }).code === 'EDESTINATION')) return { code: 'destination_not_allowed' };
  for (const e of chain) {
    if (e instanceof ClosedError) return { code: 'connection_closed' };
    if (e instanceof SyntaxError || Array.isArray((e as { issues?: unknown }).issues)) return { code: 'not_mcp' };
    const c = (e as { code?: unknown }).code;
    if (e instanceof StreamableHTTPError && typeof c === 'number') {
      return c >= 100 && c <= 599 ? { code: c >= 300 && c < 400 ? 'redirect_not_followed' : 'http_status', status: c } : { code: 'not_mcp' };
    }
    if (c === -32001) return { code: `timeout_${timeout}ms` };
    if (c === -32000) return { code: 'connection_closed' };
    if (typeof c === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(c)) return { code: c.toLowerCase() };
  }
  return { code: 'transport_error' };
}

function explain(err: unknown, timeout: number): string {
  if (err instanceof ClosedError) return 'the connection closed (the process exited or the server hung up)';
  if (err instanceof TransportError) {
    const original = err.original as { code?: unknown; name?: unknown; cause?: { code?: unknown; message?: unknown } };
    if (original instanceof SyntaxError || Array.isArray((original as { issues?: unknown }).issues))
      return `it answered something that is not MCP (${err.message})`;
    if (original.code === 'ENOENT') return 'the command was not found';
    if (original.code === 'EACCES') return 'the command is not executable';
    if (original.cause) return `cannot connect (${String(original.cause.code ?? original.cause.message)})`;
    return `transport error (${err.message})`;
  }
  const e = err as { code?: unknown; message?: unknown; name?: unknown };
  // McpError codes from the SDK: -32001 request timeout, -32000 connection closed.
  if (e.code === -32001) return `no answer within ${timeout} ms`;
  if (e.code === -32000) return 'the connection closed (the process exited or the server hung up)';
  if (e.code === 'ENOENT') return 'the command was not found';
  if (e.code === 'EACCES') return 'the command is not executable';
  const issues = (err as { issues?: Array<{ path?: unknown[]; message?: string }> }).issues;
  if (Array.isArray(issues)) {
    const first = issues[0];
    const where = first?.path?.length ? `${first.path.join('.')}: ` : '';
    return `its answer does not have the shape MCP requires (${where}${first?.message ?? 'invalid'}${issues.length > 1 ? `, and ${issues.length - 1} more` : ''})`;
  }
  return describe(err);
}

function describe(err: unknown): string {
  // Not cut here: fail() masks secrets first and cuts after.
  return err instanceof Error ? err.message : String(err);
}

const MAX_MESSAGE = 1000;

function fail(serverId: string, what: string, stderrTail: string, secrets: string[]): { ok: false; code: 'mcp_error'; message: string } {
  let message = `MCP server "${serverId}" ${maskSecrets(what, secrets)}`;
  const tail = stderrTail.trim();
  if (tail) message += ` (stderr: ${clipEnd(maskSecrets(tail, secrets), 300, secrets)})`;
  // Values of passed-through variables never reach stored or logged text.
  message = maskSecrets(message, secrets);
  return { ok: false, code: 'mcp_error', message: clipStart(message, MAX_MESSAGE, secrets) };
}

/** Replaces every whole occurrence of a secret value. */
function maskSecrets(text: string, secrets: string[]): string {
  for (const s of secrets) text = text.split(s).join('***');
  return text;
}

// A cut can leave part of a secret at the edge; four or more of its characters are masked too.
const EDGE = 4;

/** The last `n` characters, with a leading fragment that ends some secret masked. */
function clipEnd(text: string, n: number, secrets: string[]): string {
  if (text.length <= n) return text;
  let out = text.slice(-n);
  for (const s of secrets) {
    for (let k = Math.min(s.length - 1, out.length); k >= EDGE; k--) {
      if (out.startsWith(s.slice(-k))) {
        out = `***${out.slice(k)}`;
        break;
      }
    }
  }
  return out;
}

/** The first `n` characters, with a trailing fragment that starts some secret masked. */
function clipStart(text: string, n: number, secrets: string[]): string {
  if (text.length <= n) return text;
  let out = text.slice(0, n);
  for (const s of secrets) {
    for (let k = Math.min(s.length - 1, out.length); k >= EDGE; k--) {
      if (out.endsWith(s.slice(0, k))) {
        out = `${out.slice(0, -k)}***`;
        break;
      }
    }
  }
  return `${out}…`;
}
