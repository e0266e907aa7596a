import { EventEmitter } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ListToolsResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { GatewayUpstream } from '../policy-schemas/types.gen.ts';
import { Backoff } from '../runtime/client/backoff.ts';
import { definitionHash } from '../runtime/definition-hash.ts';
import { AnswerTooLargeError, HttpUpstreamTransport, speaksModern } from './http-upstream-transport.ts';
import { type CallRelay, type InputRequired, InputRequiredError, UpstreamCalls } from './upstream-calls.ts';

export type UpstreamState = 'connecting' | 'ready' | 'down';

/** Why a call to an upstream failed: it is not up, broke, or took longer than allowed. */
export type UpstreamCallResult =
  | { ok: true; result: CallToolResult }
  | { ok: false; code: 'upstream_unavailable' | 'timeout'; message: string }
  /** A 2026-07-28 server asks the client for input; the client answers by calling again. */
  | { ok: false; code: 'input_required'; message: string; asked: InputRequired };

export type UpstreamStatus = {
  state: UpstreamState;
  /** The MCP revision the server is spoken to in: 2026-07-28 (stateless) or 2025-11-25 (sessions). */
  protocol: string;
  tools: number;
  lastError: string | null;
  since: string;
  restarts: number;
};

export type UpstreamOptions = {
  /** Limit for connecting and listing tools (default 20 s). */
  connectTimeoutMs?: number;
  env?: Record<string, string | undefined>;
  backoff?: { initialMs?: number; maxMs?: number };
  /**
   * How often the tools are listed again while connected (default 60 s): a server that changes a
   * definition without sending tools/list_changed is caught at the next listing.
   */
  relistMs?: number;
  /** Called with a short fixed-form description of every failure (for the log). */
  onFailure?: (id: string, message: string) => void;
};

// A well-behaved server sends a handful of unsolicited messages; thousands a second is a flood.
// Answers to the gateway's own calls in flight are not counted: a busy server may answer faster.
const FLOOD_MESSAGES_PER_SECOND = 2_000;
// The largest single message (or HTTP answer) accepted from a server before it counts as a flood.
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const MAX_PAGES = 200;
const MODERN_VERSION = '2026-07-28';
// 2026-07-28: the server needs a client capability the request did not declare.
const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
const LEGACY_VERSION = '2025-11-25';
const MAX_TOOLS = 10_000;

/**
 * One upstream MCP server, shared by every session: connects, keeps the hash of each offered
 * tool definition, reconnects with backoff after a crash, a hang, a flood or garbage, and answers
 * calls. Emits `change` whenever its state or offered definitions change.
 */
export class Upstream extends EventEmitter<{ change: [] }> {
  private client: Client | undefined;
  /** tools/call on the current connection (the SDK client carries the rest). */
  private calls: UpstreamCalls | undefined;
  private hashes = new Map<string, string>();
  private state: UpstreamState = 'connecting';
  private lastError: string | null = null;
  private since = new Date().toISOString();
  private restarts = 0;
  private closed = false;
  private generation = 0;
  private readonly backoff: Backoff;
  private retryTimer: NodeJS.Timeout | undefined;
  private relistTimer: NodeJS.Timeout | undefined;
  /** A listing under way: a list_changed or the periodic listing meanwhile waits for it rather than overlapping. */
  private listing: Promise<void> | undefined;
  /** The listing that waits for the one under way to end; every request to list meanwhile shares it. */
  private queuedListing: Promise<void> | undefined;
  private childPid: number | null = null;
  /** The transport of a 2026-07-28 server (no SDK client around it). */
  private modernTransport: HttpUpstreamTransport | undefined;
  /** The revision the server is spoken to in. */
  private protocol: string = LEGACY_VERSION;
  /** A call timed out while others were in flight: the generation, and the result count then. */
  private suspect: { generation: number; results: number } | undefined;

  constructor(
    readonly id: string,
    private readonly config: GatewayUpstream,
    private readonly options: UpstreamOptions = {},
  ) {
    super();
    this.backoff = new Backoff(options.backoff?.initialMs ?? 200, options.backoff?.maxMs ?? 15_000);
  }

  /** Starts connecting in the background; resolves after the first attempt, whatever its outcome. */
  start(): Promise<void> {
    return this.connect();
  }

  status(): UpstreamStatus {
    return { state: this.state, protocol: this.protocol, tools: this.hashes.size, lastError: this.lastError, since: this.since, restarts: this.restarts };
  }

  isReady(): boolean {
    return this.state === 'ready';
  }

  /** The definition hash of a tool as the upstream offers it now; undefined when not offered or not up. */
  definitionHashOf(originalName: string): string | undefined {
    return this.state === 'ready' ? this.hashes.get(originalName) : undefined;
  }

  /** Calls a tool by its own name, relaying the call's progress, logs and requests through `relay`. Never throws. */
  async call(name: string, args: Record<string, unknown>, timeoutMs: number, relay?: CallRelay): Promise<UpstreamCallResult> {
    const calls = this.calls;
    if (this.state !== 'ready' || !calls) return { ok: false, code: 'upstream_unavailable', message: `upstream ${this.id} is not connected` };
    const generation = this.generation;
    try {
      return { ok: true, result: await calls.call(name, args, timeoutMs, relay) };
    } catch (err) {
      if (err instanceof InputRequiredError) return { ok: false, code: 'input_required', message: `upstream ${this.id} asked for input`, asked: err.asked };
      const code = (err as { code?: unknown }).code;
      if (code === -32001) return { ok: false, code: 'timeout', message: `upstream ${this.id} did not answer within ${timeoutMs} ms` };
      if ((err as { data?: { inputRequired?: unknown } }).data?.inputRequired === true) {
        return {
          ok: false,
          code: 'upstream_unavailable',
          message: `upstream ${this.id} asked for input (2026-07-28 input_required) that this client cannot give: only sampling and elicitation, to a 2025-11-25 client that declared them`,
        };
      }
      if (code === MISSING_REQUIRED_CLIENT_CAPABILITY) {
        return {
          ok: false,
          code: 'upstream_unavailable',
          message: `upstream ${this.id} needs something of the client (sampling or elicitation) that this client did not declare`,
        };
      }
      if (typeof code === 'number' && code !== -32000 && !(err as { issues?: unknown }).issues) {
        // A JSON-RPC error answer: the server is alive and said no.
        return { ok: false, code: 'upstream_unavailable', message: `upstream ${this.id} answered with error ${code}` };
      }
      // Closed, too large, or an answer of the wrong shape: the connection cannot be trusted any more.
      const cause = (err as { issues?: unknown }).issues ? 'answered a call with something that is not a tool result' : 'the connection closed';
      this.fail(generation, tooLarge(err) ?? cause);
      return { ok: false, code: 'upstream_unavailable', message: `upstream ${this.id} failed during the call` };
    }
  }

  /**
   * After a call timed out: a hung server is restarted, since later calls would queue behind
   * whatever it is stuck on. A restart fails every call in flight, so while other calls are
   * waiting the server is only suspected: a tool result from it clears the suspicion (it is
   * working; that one call was stuck), and another timeout with no result in between restarts it.
   */
  restartAfterTimeout(): void {
    const calls = this.calls;
    if (!calls) return;
    const results = calls.resultCount();
    const stillSilent = this.suspect?.generation === this.generation && this.suspect.results === results;
    if (calls.pendingCount() === 0 || stillSilent) {
      this.suspect = undefined;
      this.fail(this.generation, 'did not answer a call in time');
      return;
    }
    this.suspect = { generation: this.generation, results };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.relistTimer);
    await this.disconnect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const generation = ++this.generation;
    this.setState('connecting', this.lastError);
    const timeout = this.options.connectTimeoutMs ?? 20_000;
    // An HTTP server that speaks 2026-07-28 is spoken to statelessly; any other, with initialize and a session.
    const c = this.config;
    if (c.kind === 'http' && URL.canParse(c.url) && (await speaksModern(new URL(c.url), c.headers ?? {}, MODERN_VERSION, timeout))) {
      if (generation !== this.generation || this.closed) return;
      return this.connectModern(generation, new URL(c.url), c.headers ?? {});
    }
    if (generation !== this.generation || this.closed) return;
    this.protocol = LEGACY_VERSION;
    let transport: Transport;
    try {
      transport = this.makeTransport();
    } catch (err) {
      this.fail(generation, `cannot be configured (${errorName(err)})`);
      return;
    }
    const client = new Client({ name: 'toolgate-gateway', version: '1' }, { capabilities: {} });
    this.client = client;
    client.onclose = () => this.fail(generation, 'the connection closed');
    client.onerror = (err) => this.fail(generation, tooLarge(err) ?? `sent something that is not MCP (${errorName(err)})`);
    try {
      await client.connect(transport, { timeout });
      if (transport instanceof StdioClientTransport) this.childPid = transport.pid;
      this.calls = new UpstreamCalls(transport, this.floodWatch(generation));
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.relist(generation));
      await this.refresh(generation, true);
      this.armRelist(generation);
    } catch (err) {
      this.fail(generation, `failed to start (${errorName(err)})`);
    }
  }

  /**
   * A 2026-07-28 server: no initialize, no session, no notification stream; every request carries
   * its envelope (the transport adds it). Its list changes are caught by the periodic listing.
   */
  private async connectModern(generation: number, url: URL, headers: Record<string, string>): Promise<void> {
    this.protocol = MODERN_VERSION;
    const transport = new HttpUpstreamTransport(url, { headers, maxMessageBytes: MAX_MESSAGE_BYTES, modern: { version: MODERN_VERSION } });
    this.modernTransport = transport;
    transport.onclose = () => this.fail(generation, 'the connection closed');
    transport.onerror = (err) => this.fail(generation, tooLarge(err) ?? `sent something that is not MCP (${errorName(err)})`);
    try {
      await transport.start();
      this.calls = new UpstreamCalls(transport, this.floodWatch(generation), true);
      await this.refresh(generation, true);
      this.armRelist(generation);
    } catch (err) {
      this.fail(generation, `failed to start (${errorName(err)})`);
    }
  }

  /** One page of the server's tools, by whichever revision it speaks. */
  private async listPage(cursor: string | undefined, timeout: number) {
    const params = cursor === undefined ? {} : { cursor };
    if (this.client) return this.client.request({ method: 'tools/list', params }, ListToolsResultSchema, { timeout });
    if (!this.calls) throw new Error('not connected');
    return ListToolsResultSchema.parse(await this.calls.request('tools/list', params, timeout));
  }

  /** Lists again every relistMs while this connection lives, whether or not the server says its list changed. */
  private armRelist(generation: number): void {
    clearInterval(this.relistTimer);
    if (generation !== this.generation || this.state !== 'ready') return;
    const every = this.options.relistMs ?? 60_000;
    const timer = setInterval(() => {
      if (generation !== this.generation) clearInterval(timer);
      else void this.relist(generation);
    }, every);
    timer.unref();
    this.relistTimer = timer;
  }

  /**
   * One listing at a time: a request to list while one runs is served by one more listing after
   * it, shared by every request made before that one starts, so a server that sends list_changed
   * without end costs two listings at most, not one per notification.
   */
  private relist(generation: number): Promise<void> {
    if (this.queuedListing) return this.queuedListing;
    const previous = this.listing ?? Promise.resolve();
    const run = () => {
      if (this.queuedListing === next) this.queuedListing = undefined;
      return this.refresh(generation);
    };
    const next: Promise<void> = previous.then(run, run);
    this.queuedListing = next;
    this.listing = next;
    void next.finally(() => {
      if (this.listing === next) this.listing = undefined;
    });
    return next;
  }

  /** Re-lists the tools; the first listing after connecting makes the upstream ready. */
  private async refresh(generation: number, first = false): Promise<void> {
    if ((!this.client && !this.calls) || generation !== this.generation) return;
    const timeout = this.options.connectTimeoutMs ?? 20_000;
    const hashes = new Map<string, string>();
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await this.listPage(cursor, timeout);
        for (const t of result.tools) {
          const def: Parameters<typeof definitionHash>[0] = { name: t.name, inputSchema: t.inputSchema as Record<string, unknown> };
          if (t.description !== undefined) def.description = t.description;
          if (t.outputSchema !== undefined) def.outputSchema = t.outputSchema as Record<string, unknown>;
          hashes.set(t.name, definitionHash(def));
        }
        if (hashes.size > MAX_TOOLS) throw new Error('offers too many tools');
        cursor = result.nextCursor || undefined;
        if (cursor === undefined) break;
      }
    } catch (err) {
      if (generation !== this.generation) return;
      const code = (err as { code?: unknown }).code;
      if (!first && typeof code === 'number' && code !== -32000 && code !== -32001) {
        // The server is up but would not list its tools: serve none of them until it does.
        if (this.hashes.size > 0) {
          this.hashes = new Map();
          this.emit('change');
        }
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => void this.relist(generation), this.backoff.next());
        this.retryTimer.unref();
        return;
      }
      this.fail(generation, `tools/list failed (${errorName(err)})`);
      return;
    }
    if (generation !== this.generation) return;
    const changed = first || !sameMap(hashes, this.hashes);
    this.hashes = hashes;
    this.backoff.reset();
    if (first) {
      this.setState('ready', null);
    } else if (changed) {
      this.emit('change');
    }
  }

  /** Ends the current connection (once per generation) and schedules a reconnect. */
  private fail(generation: number, message: string): void {
    if (generation !== this.generation || this.state === 'down' || this.closed) return;
    this.generation++;
    this.restarts++;
    this.options.onFailure?.(this.id, message);
    this.setState('down', message);
    clearInterval(this.relistTimer);
    void this.disconnect();
    const wait = this.backoff.next();
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), wait);
    this.retryTimer.unref();
  }

  private async disconnect(): Promise<void> {
    const client = this.client;
    const pid = this.childPid;
    const modern = this.modernTransport;
    this.calls?.close();
    this.calls = undefined;
    this.client = undefined;
    this.modernTransport = undefined;
    if (modern) {
      modern.onclose = undefined;
      modern.onerror = undefined;
      await modern.close().catch(() => undefined);
    }
    this.childPid = null;
    if (client) {
      client.onclose = undefined;
      client.onerror = undefined;
    }
    // A misbehaving server gets no grace period.
    if (pid !== null) signal(pid, 'SIGKILL');
    try {
      await client?.close();
    } catch {
      // Already broken.
    }
  }

  /** Counts unsolicited messages: a server that floods the connection is cut off and restarted. */
  private floodWatch(generation: number): () => boolean {
    let windowStart = Date.now();
    let count = 0;
    return () => {
      const now = Date.now();
      if (now - windowStart >= 1000) {
        windowStart = now;
        count = 0;
      }
      if (++count <= FLOOD_MESSAGES_PER_SECOND) return true;
      this.fail(generation, 'flooded the connection');
      return false;
    };
  }

  private makeTransport(): Transport {
    const c = this.config;
    if (c.kind === 'http') {
      return new HttpUpstreamTransport(new URL(c.url), { headers: c.headers ?? {}, maxMessageBytes: MAX_MESSAGE_BYTES });
    }
    const env = this.options.env ?? process.env;
    const childEnv: Record<string, string> = {};
    for (const name of c.env ?? []) {
      const value = env[name];
      if (value !== undefined) childEnv[name] = value;
    }
    if (env.PATH !== undefined) childEnv.PATH = env.PATH;
    const transport = new StdioClientTransport({
      command: c.command,
      args: c.args ?? [],
      env: childEnv,
      stderr: 'pipe',
      maxBufferSize: MAX_MESSAGE_BYTES,
    } as ConstructorParameters<typeof StdioClientTransport>[0]);
    // Upstream stderr is not ours to print (it may carry the values passed through): drain it.
    transport.stderr?.on('data', () => undefined);
    return transport;
  }

  private setState(state: UpstreamState, lastError: string | null): void {
    const changed = state !== this.state;
    this.state = state;
    this.lastError = lastError;
    if (changed) {
      this.since = new Date().toISOString();
      this.emit('change');
    }
  }
}

function sameMap(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

/** The cause for a message cut off at MAX_MESSAGE_BYTES, however it was reported (a call's failure or the transport's error). */
function tooLarge(err: unknown): string | undefined {
  return err instanceof AnswerTooLargeError ? `sent a message larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB` : undefined;
}

/** A fixed-form cause: error names and codes only, never text an upstream chose. */
function errorName(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown; issues?: unknown };
  if (e?.code === -32001) return 'timeout';
  if (e?.code === -32000) return 'connection closed';
  if (typeof e?.code === 'string') return e.code;
  if (Array.isArray(e?.issues)) return 'malformed answer';
  if (err instanceof SyntaxError) return 'not JSON';
  if (typeof e?.code === 'number') return `error ${e.code}`;
  return typeof e?.name === 'string' ? e.name : 'error';
}
