import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type {
  CallToolRequest,
  ClientCapabilities,
  CallToolResult,
  LoggingLevel,
  RequestId,
  ServerNotification,
  ServerRequest,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Budgets, EvaluationRequest } from '../policy-schemas/types.gen.ts';
import { createView, decide } from '../runtime/decide.ts';
import type { DecideErrorCode, DecideOptions, ToolView } from '../runtime/decide.ts';
import { ApprovalHold, type HoldOutcome, type HoldRefusal } from './approval-hold.ts';
import { grantedConnections } from '../runtime/evaluate.ts';
import type { LoadedBundle, LoadedTool } from '../runtime/load-bundle.ts';
import { nextState } from '../runtime/next-state.ts';
import { setOwnMember } from '../runtime/own-member.ts';
import type { ResolvedClient, ResolvedConfig } from './config.ts';
import type { DecisionSink, GatewayDecisionRecord } from './decision-sink.ts';
import { unreadableArgumentsOf } from './call-arguments-text.ts';
import { type LeanRequest, type LeanCallParams, callToolResultSchema, isLeanListParams, leanCallParams } from './lean-messages.ts';
import { LIST_PAGE_SIZE, type Page, pageCount, pageOf } from './list-pages.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { PolicySource } from './policy-source.ts';
import { paramHeaders } from './param-headers.ts';
import { redactResult } from './redact-result.ts';
import { serverStateFits } from './state-handles.ts';
import type { Upstream } from './upstream.ts';
import { type CallRelay, type InputRequired, MAX_INPUT_REQUESTS } from './upstream-calls.ts';

/** Every code a refused tools/call carries in its text and in `_meta.toolgate.errorCode`. */
export type RefusalCode = DecideErrorCode | HoldRefusal | 'definition_changed' | 'upstream_unavailable' | 'budget_exceeded';

/** Why a visible tool is not served right now. */
type Withheld = 'unavailable' | 'upstream_unavailable' | 'definition_changed';

type Decision = GatewayDecisionRecord['decision'];

export type GatewayDeps = {
  config: Pick<ResolvedConfig, 'timeouts'>;
  policy: PolicySource;
  upstreams: ReadonlyMap<string, Upstream>;
  sink: DecisionSink;
  metrics: GatewayMetrics;
  version?: string;
  /** Where calls needing a person's approval are held (gateway/approval-hold.ts); none: only a client the roles trust may confirm. */
  approvals?: ApprovalHold;
  /** Tools per tools/list answer (default LIST_PAGE_SIZE); past it the client follows `nextCursor`. */
  listPageSize?: number;
};

/** What counting budgets have used: per client identity, shared by all its sessions and requests. */
export type Usage = { runtimeMs: number; resultBytes: number };

/**
 * How the gateway reaches the client of a call while the call runs: what it can answer, its
 * call's notifications (progress, log messages), and questions to it (sampling, elicitation).
 */
export type ClientChannel = {
  capabilities(): ClientCapabilities | undefined;
  notify(notification: ServerNotification, requestId: RequestId | undefined): void;
  request(
    request: ServerRequest,
    resultSchema: typeof CreateMessageResultSchema | typeof ElicitResultSchema,
    options: { relatedRequestId?: RequestId; timeout: number },
  ): Promise<Record<string, unknown>>;
};

/**
 * Who asks and in which workflow state: a 2025-11-25 session (its own MCP server object, its
 * state held between requests), or one 2026-07-28 request (no server object; the state the
 * request presented, the channel of that one answer). Budgets are the client's, never the
 * session's: a new session or a dropped state handle resets nothing.
 */
export class GatewaySession {
  state: string;
  /** What the client was last shown (or told about): a change sends tools/list_changed. */
  lastSignature: string | undefined;
  /** The session's MCP server object; null for a 2026-07-28 request, which has no session. */
  readonly server: Server | null;
  readonly channel: ClientChannel;
  closed = false;
  /** The least severe log level the client asked for; undefined: every relayed log message. */
  logLevel: LoggingLevel | undefined;
  /** For a 2026-07-28 subscription (no server object): told when what it may see changes. */
  onListChanged: (() => void) | undefined;
  /** A 2026-07-28 call retried with the answers to an upstream's input requests (verified by the listener). */
  inputRetry: { inputResponses: Record<string, unknown>; requestState?: string } | undefined;
  /**
   * A 2026-07-28 call's own approval question (the role says `approvals.by: "client"`): the
   * client's answer from a retry the listener verified (`accept`, `decline`), or `asked` once the
   * gateway put the question in this request's answer.
   */
  clientApproval: 'accept' | 'decline' | 'asked' | undefined;

  constructor(
    readonly id: string,
    readonly client: ResolvedClient,
    server: Server | null,
    readonly usage: Usage,
    channel?: ClientChannel,
  ) {
    this.state = client.initialState;
    this.server = server;
    this.channel = channel ?? serverChannel(server!);
  }

  request(): EvaluationRequest {
    return { ...this.client.request, state: this.state };
  }
}

type ToolCache = { tools: Map<string, Tool> };
const toolCaches = new WeakMap<LoadedBundle, ToolCache>();
/**
 * A served list; `pages` are its tools/list results serialized page by page, `modernPages` the
 * same for a 2026-07-28 request (cache hints, the `toolgate_state` argument), kept with it while
 * it is current. `fingerprint` is what its cursors carry (list-pages.ts).
 */
type Listed = { tools: Tool[]; signature: string; fingerprint?: string; pages?: Buffer[]; modernPages?: Buffer[] };

/**
 * How long a 2026-07-28 client may keep a tools/list answer (`ttlMs`): short enough that a client
 * that only polls sees a publish, a drift or a recovery within a minute.
 */
export const LIST_TTL_MS = 30_000;

/** The argument the gateway adds to every listed schema for 2026-07-28 clients, and strips before decide and the upstream. */
export const STATE_ARGUMENT = 'toolgate_state';

/**
 * The enforcement core shared by the HTTP and stdio listeners: one policy (the bundle) decides
 * what each session's tools/list shows and what its tools/call may do; allowed calls go to the
 * upstream under their own name and come back redacted.
 */
export class Gateway {
  private readonly sessions = new Set<GatewaySession>();
  private readonly usage = new Map<string, Usage>();
  /** 2026-07-28 subscriptions/listen streams, each watching one client in one presented state. */
  private readonly listeners = new Set<GatewaySession>();
  private refreshQueued = false;
  private readonly offs: Array<() => void> = [];
  /** Bumped whenever an upstream's state or definitions change: served lists computed before are stale. */
  private upstreamEpoch = 0;
  /** Served lists by evaluate() answer (cached and shared by evaluate for equal requests). */
  private listed = new WeakMap<object, Listed & { epoch: number }>();

  private readonly approvals: ApprovalHold;

  constructor(private readonly deps: GatewayDeps) {
    this.approvals =
      deps.approvals ??
      new ApprovalHold({
        connection: null,
        trustedKeys: () => undefined,
        used: { has: () => true, use: () => false },
        approvalMs: deps.config.timeouts.approvalMs,
      });
    const refresh = () => this.queueRefresh();
    const upstreamChanged = () => {
      this.upstreamEpoch++;
      this.queueRefresh();
    };
    deps.policy.on('change', refresh);
    this.offs.push(() => deps.policy.off('change', refresh));
    for (const up of deps.upstreams.values()) {
      up.on('change', upstreamChanged);
      this.offs.push(() => up.off('change', upstreamChanged));
    }
  }

  /** Opens a session for a client: an MCP server object the listener connects to its transport. */
  openSession(client: ResolvedClient): GatewaySession {
    const server = new Server(
      { name: 'toolgate-gateway', version: this.deps.version ?? '1' },
      { capabilities: { tools: { listChanged: true }, logging: {} }, instructions: 'Tools are filtered and enforced by Toolgate policy.' },
    );
    const session = new GatewaySession(randomUUID(), client, server, this.usageOf(client));
    // Upstreams' log messages during this session's calls are relayed from this level up.
    server.setRequestHandler(SetLevelRequestSchema, (req) => {
      session.logLevel = req.params.level;
      return {};
    });
    server.setRequestHandler(ListToolsRequestSchema, (req) => {
      const page = pageOf(this.listShown(session), req.params?.cursor, this.pageSize);
      return page.nextCursor === undefined ? { tools: page.tools } : { tools: page.tools, nextCursor: page.nextCursor };
    });
    server.setRequestHandler(CallToolRequestSchema, (req, extra) => this.call(session, req.params, extra.requestId));
    session.lastSignature = this.list(session).signature;
    this.sessions.add(session);
    this.deps.metrics.sessions.set(this.sessions.size);
    return session;
  }

  closeSession(session: GatewaySession): void {
    if (session.closed) return;
    session.closed = true;
    this.sessions.delete(session);
    this.deps.metrics.sessions.set(this.sessions.size);
    void session.server?.close().catch(() => undefined);
  }

  /**
   * Watches what a 2026-07-28 caller (a client in its presented state) may see: `changed` runs
   * whenever its tools/list answer would differ from the last one. Returns the unsubscribe.
   */
  subscribe(caller: GatewaySession, changed: () => void): () => void {
    caller.onListChanged = changed;
    caller.lastSignature = this.list(caller).signature;
    this.listeners.add(caller);
    return () => {
      caller.closed = true;
      this.listeners.delete(caller);
    };
  }

  /** The reviewed input schema of a tool as listed to clients (from the bundle held now), if there is one. */
  inputSchemaOf(name: string): unknown {
    const now = this.deps.policy.current();
    return now.ok ? now.current.loaded.byId.get(name)?.def?.inputSchema : undefined;
  }

  /** What a client's counting budgets have used so far, across all its sessions and requests. */
  usageOf(client: ResolvedClient): Usage {
    let usage = this.usage.get(client.name);
    if (!usage) this.usage.set(client.name, (usage = { runtimeMs: 0, resultBytes: 0 }));
    return usage;
  }

  /**
   * A 2026-07-28 request's caller: the client in the state its request presented (already
   * verified), reached through the answer of that one request. Not a session: nothing about it
   * outlives the request, and it is never sent list_changed.
   */
  requestCaller(client: ResolvedClient, state: string, channel: ClientChannel, logLevel?: LoggingLevel): GatewaySession {
    const caller = new GatewaySession(randomUUID(), client, null, this.usageOf(client), channel);
    caller.state = state;
    caller.logLevel = logLevel;
    return caller;
  }

  sessionCount(): number {
    return this.sessions.size;
  }

  close(): void {
    for (const off of this.offs) off();
    for (const s of [...this.listeners]) s.onListChanged = undefined;
    this.listeners.clear();
    for (const s of [...this.sessions]) this.closeSession(s);
  }

  /**
   * tools/call and tools/list as the HTTP listener's transport hands them over, before the SDK
   * server: the same answers (and, for a result the SDK would refuse, the same error) without the
   * SDK's per-message schema passes, and a tools/list answer serialized once per served list.
   * Requests of another method or with unusual params return undefined: the SDK server takes them.
   */
  dispatch(session: GatewaySession, request: LeanRequest): Promise<string | Buffer> | undefined {
    if (request.method === 'tools/call') {
      // Arguments that are not I-JSON are refused here whatever else the request holds (see call-arguments-text.ts).
      const argumentsText = unreadableArgumentsOf(request);
      const params = argumentsText === undefined ? leanCallParams(request.params) : (request.params as LeanCallParams);
      if (!params) return undefined;
      return this.call(session, params, request.id, argumentsText).then(serializedCallResult);
    }
    if (request.method === 'tools/list' && isLeanListParams(request.params)) {
      try {
        return Promise.resolve(
          this.servedPage(this.listShown(session), request.params?.cursor, 'pages', (page) => ({ tools: page.tools, nextCursor: page.nextCursor })),
        );
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return undefined;
  }

  /**
   * tools/list for a 2026-07-28 request, serialized: the same tools (a function of the client's
   * authorization and the state its request presented, nothing else), each schema with the
   * optional `toolgate_state` argument, the result type and the cache hints. `private`: the list
   * is this client's, never to be served to another from a shared cache. A list longer than a page
   * is answered from `cursor` on; a cursor that names no page of it throws invalid params.
   */
  modernList(caller: GatewaySession, cursor?: unknown): Buffer {
    return this.servedPage(this.listShown(caller), cursor, 'modernPages', (page) => {
      // Clients cache a list by method alone, not by the state handle presented: where the state
      // changes what is listed, no list may be kept at all.
      const now = this.deps.policy.current();
      const ttlMs = now.ok && stateDependent(now.current.loaded) ? 0 : LIST_TTL_MS;
      return { resultType: 'complete', tools: page.tools.map(withStateArgument), nextCursor: page.nextCursor, ttlMs, cacheScope: 'private' };
    });
  }

  /**
   * The page of `listed` that `cursor` names (or the invalid-params error), serialized once per
   * list and era: `era` is where the list keeps that era's pages, `render` the page's result.
   */
  private servedPage(listed: Listed, cursor: unknown, era: 'pages' | 'modernPages', render: (page: Page<Tool>) => object): Buffer {
    const page = pageOf(listed, cursor, this.pageSize);
    const pages = (listed[era] ??= new Array(pageCount(listed, this.pageSize)));
    pages[page.index] ??= Buffer.from(JSON.stringify(render(page)));
    return pages[page.index];
  }

  private get pageSize(): number {
    return this.deps.listPageSize ?? LIST_PAGE_SIZE;
  }

  /** The list answered to a tools/list: from now on a change to it is news for the session. */
  private listShown(session: GatewaySession): Listed {
    const listed = this.list(session);
    session.lastSignature = listed.signature;
    this.deps.metrics.lists.inc();
    return listed;
  }

  /** The tools a session may see now, each by its Toolgate id with the bundle's description and schema. */
  list(session: GatewaySession): Listed {
    const now = this.deps.policy.current();
    if (!now.ok) return { tools: [], signature: 'none' };
    const loaded = now.current.loaded;
    const view = createView(loaded, session.request());
    const hit = this.listed.get(view.result);
    if (hit && hit.epoch === this.upstreamEpoch) return hit;
    const cache = toolCacheOf(loaded);
    const tools: Tool[] = [];
    let signature = loaded.revision;
    for (const entry of view.result.tools) {
      const tool = loaded.byId.get(entry.id)!;
      if (this.withheld(tool) !== null) continue;
      tools.push(cache.tools.get(tool.id) ?? mcpTool(cache, tool));
      signature += `\n${tool.id}`;
    }
    const answer = { tools, signature, epoch: this.upstreamEpoch };
    this.listed.set(view.result, answer);
    return answer;
  }

  /** Per upstream: which bundle tools it serves are withheld now, and why. */
  withheldTools(): Map<string, Array<{ tool: string; reason: Withheld }>> {
    const out = new Map<string, Array<{ tool: string; reason: Withheld }>>();
    for (const id of this.deps.upstreams.keys()) out.set(id, []);
    const now = this.deps.policy.current();
    if (!now.ok) return out;
    for (const tool of now.current.loaded.tools) {
      if (tool.excluded !== null) continue;
      const server = tool.def?.source?.server;
      if (!server || !out.has(server)) continue;
      const reason = this.withheld(tool);
      if (reason !== null) out.get(server)!.push({ tool: tool.id, reason });
    }
    return out;
  }

  private withheld(tool: LoadedTool): Withheld | null {
    const source = tool.def?.source;
    if (source?.kind !== 'mcp' || !source.server || !source.originalName) return 'unavailable';
    if (!tool.id.startsWith(`mcp__${source.server}__`)) return 'unavailable';
    const upstream = this.deps.upstreams.get(source.server);
    if (!upstream) return 'unavailable';
    if (!upstream.isReady()) return 'upstream_unavailable';
    const live = upstream.definitionHashOf(source.originalName);
    if (live === undefined) return 'unavailable';
    return live === tool.definitionHash ? null : 'definition_changed';
  }

  /** tools/call: decide, then (only when allowed) approval, budgets, the upstream, redaction. */
  async call(
    session: GatewaySession,
    params: CallToolRequest['params'],
    /** The id of the client's request, so an approval question travels on its stream. */
    requestId?: RequestId,
    /** The arguments' text as the client sent it, when it is not I-JSON: decide() reads it instead of the value, and refuses it. */
    argumentsText?: string,
  ): Promise<CallToolResult> {
    const started = performance.now();
    const name = typeof params.name === 'string' ? params.name : '';
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    const given = (params._meta as { toolCallId?: unknown } | undefined)?.toolCallId;
    const toolCallId = typeof given === 'string' && given !== '' && given.length <= 200 ? given : randomUUID();
    const request = session.request();
    const record: GatewayDecisionRecord = {
      at: new Date().toISOString(),
      toolCallId,
      subject: session.client.subject,
      groups: request.groups ?? ['default'],
      state: session.state,
      tool: name.slice(0, 200) || '(none)',
      decision: 'deny',
      bundleVersion: null,
    };
    if (request.profile !== undefined) record.profile = request.profile;
    if (request.facts !== undefined) record.facts = request.facts;

    const finish = (decision: Decision, code: RefusalCode | null, message: string | null, result?: CallToolResult): CallToolResult => {
      record.decision = decision;
      if (code) record.errorCode = code;
      this.deps.sink.record(record);
      this.deps.metrics.calls.inc({ decision, error_code: code ?? '' });
      this.deps.metrics.callSeconds.observe({ outcome: code ?? 'ok' }, (performance.now() - started) / 1000);
      const meta: Record<string, unknown> = { decision, bundleVersion: record.bundleVersion, revision: record.revision ?? null, toolCallId };
      if (code) meta.errorCode = code;
      if (result) return { ...result, _meta: { ...(result._meta ?? {}), toolgate: meta } };
      return { content: [{ type: 'text', text: `${code}: ${message}` }], isError: true, _meta: { toolgate: meta } };
    };

    const now = this.deps.policy.current();
    if (!now.ok) {
      record.reason = now.reason;
      return finish('deny', 'policy_denied', now.message);
    }
    let loaded = now.current.loaded;
    record.bundleVersion = loaded.version;
    record.revision = loaded.revision;

    // decide() as any runtime asks it, with the connection the call runs under (see connectionFor).
    const decideIn = (view: ToolView, options?: DecideOptions) =>
      decide(view, { toolCallId, name, arguments: argumentsText ?? args, ...connectionFor(view, name, params._meta) }, options);
    const view = createView(loaded, request);
    const d = decideIn(view);
    if (d.decision === 'deny') {
      if (d.errorCode === 'policy_denied') {
        const hidden = view.result.filtered.find((f) => f.id === name);
        if (hidden) record.reason = hidden.reason;
        else if (view.result.rejected) record.reason = view.result.rejected.reason;
      }
      const message = d.errors?.length ? `${d.message} (${d.errors.map((e) => `${e.pointer || '/'} ${e.message}`).join('; ')})` : d.message!;
      return finish('deny', d.errorCode!, message);
    }
    let tool = loaded.byId.get(name)!;
    const withheld = this.withheld(tool);
    if (withheld !== null) return finish(...withheldRefusal(withheld, tool.id, d.decision, 'since it was approved'));
    const spent = budgetSpent(session, loaded.bundle.policy.budgets);
    if (spent) return finish('deny', 'budget_exceeded', spent);

    if (d.decision === 'require_approval') {
      const held = await this.holdForApproval(session, view, d, tool, args, params._meta, requestId);
      if ('asked' in held) {
        // A 2026-07-28 client confirms by calling again with its answer (modern-http.ts signs the requestState).
        record.reason = 'input_required';
        return finish('require_approval', null, null, approvalQuestion(tool, args));
      }
      if (!held.ok) return finish('require_approval', held.code, held.message);
      if (session.closed) return finish('require_approval', 'approval_declined', 'the session ended before the call');
      // The approval (a person's receipt, checked offline; or the client's, where the roles take it) is used up here.
      const approved = decideIn(view, { approval: held.approval });
      if (approved.decision !== 'allow') return finish('deny', approved.errorCode ?? 'approval_invalid', approved.message ?? 'the approval does not hold');
      record.approval = approved.approval;
      if (held.by === 'client') record.reason = 'client_confirmed';
      // The person may take minutes: the call goes ahead only if the policy and the pin still let it,
      // in the state the session is in now (another call of the session may have moved it).
      const later = this.deps.policy.current();
      if (!later.ok) return finish('deny', 'policy_denied', later.message);
      if (later.current.loaded !== loaded || session.state !== request.state) {
        const again = decideIn(createView(later.current.loaded, session.request()));
        if (again.decision === 'deny')
          return finish('deny', again.errorCode!, `${again.message} (the policy or the workflow state changed while waiting for approval)`);
        // From here on the bundle now held decides: budgets, redaction, the next state and the record.
        loaded = later.current.loaded;
        tool = loaded.byId.get(name)!;
        record.bundleVersion = loaded.version;
        record.revision = loaded.revision;
      }
      // The client's other calls may have spent its counting budgets meanwhile.
      const spentNow = budgetSpent(session, loaded.bundle.policy.budgets);
      if (spentNow) return finish('deny', 'budget_exceeded', spentNow);
      // The upstream may have gone, drifted, or (in a new bundle) stopped serving the tool meanwhile.
      const withheldNow = this.withheld(tool);
      if (withheldNow !== null) return finish(...withheldRefusal(withheldNow, tool.id, d.decision, 'while waiting for approval'));
    }

    const sessionBudgets = loaded.bundle.policy.budgets;
    const perCall: Budgets = tool.def?.budgets ?? {};

    const source = tool.def!.source!;
    const upstream = this.deps.upstreams.get(source.server!)!;
    const callMs = this.deps.config.timeouts.callMs;
    let limit = callMs;
    if (perCall.maxRuntimeMs !== undefined) limit = Math.min(limit, perCall.maxRuntimeMs);
    if (sessionBudgets?.maxRuntimeMs !== undefined) limit = Math.min(limit, Math.max(1, Math.ceil(sessionBudgets.maxRuntimeMs - session.usage.runtimeMs)));
    const t0 = performance.now();
    const relay = this.relayFor(session, loaded, tool.id, source.server!, params._meta, requestId, limit);
    relay.headers = paramHeaders(tool.def!.inputSchema, args);
    const answer = await upstream.call(source.originalName!, args, limit, relay);
    session.usage.runtimeMs += performance.now() - t0;
    if (!answer.ok) {
      if (answer.code === 'input_required') {
        // The upstream needs the client: a 2026-07-28 client answers by calling again (see modern-http.ts).
        const asked = inputRequestsFor(loaded, tool.id, source.server!, answer.asked);
        if (typeof asked === 'string') return finish(d.decision, 'upstream_unavailable', asked);
        record.reason = 'input_required';
        return finish(d.decision, null, null, asked);
      }
      if (answer.code === 'timeout' && limit < callMs) return finish(d.decision, 'budget_exceeded', `${tool.id} ran past its runtime budget of ${limit} ms`);
      if (answer.code === 'timeout') upstream.restartAfterTimeout();
      return finish(d.decision, 'upstream_unavailable', answer.message);
    }
    const bytes = Buffer.byteLength(JSON.stringify(answer.result), 'utf8');
    session.usage.resultBytes += bytes;
    if (perCall.maxResultBytes !== undefined && bytes > perCall.maxResultBytes) {
      return finish(d.decision, 'budget_exceeded', `the result of ${tool.id} is larger than its budget of ${perCall.maxResultBytes} bytes`);
    }
    if (sessionBudgets?.maxResultBytes !== undefined && session.usage.resultBytes > sessionBudgets.maxResultBytes) {
      return finish(d.decision, 'budget_exceeded', `this client's results passed the budget of ${sessionBudgets.maxResultBytes} bytes`);
    }
    const result = redactResult(loaded, tool.id, answer.result);
    if (!answer.result.isError) {
      const next = nextState(loaded, session.state, tool.id);
      if (next !== session.state) {
        session.state = next;
        this.notify(session);
      }
    }
    return finish(d.decision, null, null, result);
  }

  /**
   * What of an allowed call's upstream reaches the client that made it, and nothing of it anyone
   * else: progress (only when the client gave a progress token, under that token), log messages
   * (from the level the client set), sampling and elicitation requests (only to a client that
   * declared the capability, bounded by the call's time). Text the upstream chooses goes to the
   * client only when the tool's redaction lets its result text through: a tool whose results are
   * redacted cannot say the same things in a log line or a question. An upstream's elicitation is
   * marked as the upstream's and is never taken for an approval: approvals are asked by the
   * gateway alone, before the upstream is called.
   */
  private relayFor(
    session: GatewaySession,
    loaded: LoadedBundle,
    toolId: string,
    server: string,
    meta: Record<string, unknown> | undefined,
    requestId: RequestId | undefined,
    timeoutMs: number,
  ): CallRelay {
    const given = meta?.progressToken;
    const token = typeof given === 'string' || Number.isSafeInteger(given) ? (given as string | number) : undefined;
    const related = requestId !== undefined ? { relatedRequestId: requestId } : {};
    const showsText = redactResult(loaded, toolId, { content: [{ type: 'text', text: 'x' }] }).content.length === 1;
    const send = (notification: ServerNotification) => {
      if (!session.closed) session.channel.notify(notification, requestId);
    };
    const caps = session.channel.capabilities();
    return {
      passThrough: session.server === null,
      ...(session.inputRetry ? { retry: session.inputRetry } : {}),
      progress: token !== undefined,
      // Only what the gateway would relay, and only where the tool's text may reach the client anyway.
      answers: showsText ? { ...(caps?.sampling ? { sampling: {} } : {}), ...(caps?.elicitation ? { elicitation: {} } : {}) } : {},
      notify: (method, params) => {
        if (method === 'notifications/progress') {
          if (token === undefined || typeof params.progress !== 'number') return;
          const progress: Record<string, unknown> = { progressToken: token, progress: params.progress };
          if (typeof params.total === 'number') progress.total = params.total;
          if (showsText && typeof params.message === 'string') progress.message = params.message;
          send({ method, params: progress } as ServerNotification);
          return;
        }
        if (!showsText || !LOG_LEVELS.includes(params.level as LoggingLevel)) return;
        if (session.logLevel && LOG_LEVELS.indexOf(params.level as LoggingLevel) < LOG_LEVELS.indexOf(session.logLevel)) return;
        const log: Record<string, unknown> = { level: params.level, logger: `${server}${typeof params.logger === 'string' ? `/${params.logger}` : ''}` };
        log.data = params.data;
        send({ method, params: log } as ServerNotification);
      },
      request: async (method, params) => {
        if (session.closed) throw new McpError(ErrorCode.ConnectionClosed, 'the client has gone');
        const caps = session.channel.capabilities();
        const can = method === 'sampling/createMessage' ? caps?.sampling : caps?.elicitation;
        if (!can) throw new McpError(ErrorCode.MethodNotFound, `the client cannot answer ${method}`);
        if (!showsText) throw new McpError(ErrorCode.InvalidRequest, `${toolId}'s results are redacted: its server may not ask the client`);
        if (method === 'sampling/createMessage') {
          return session.channel.request({ method, params } as ServerRequest, CreateMessageResultSchema, { ...related, timeout: timeoutMs });
        }
        const asked = { ...params, message: `The MCP server "${server}" asks (this is not an approval by Toolgate): ${String(params.message ?? '')}` };
        return session.channel.request({ method, params: asked } as ServerRequest, ElicitResultSchema, { ...related, timeout: timeoutMs });
      },
    };
  }

  /** Holds a call that needs approval until it is decided (see ApprovalHold), telling a client that gave a progress token. */
  private holdForApproval(
    session: GatewaySession,
    view: ToolView,
    decided: ReturnType<typeof decide>,
    tool: LoadedTool,
    args: Record<string, unknown>,
    meta: Record<string, unknown> | undefined,
    requestId: RequestId | undefined,
  ): Promise<HoldOutcome> {
    const relay = this.relayFor(session, view.loaded, tool.id, tool.def?.source?.server ?? '', meta, requestId, this.deps.config.timeouts.approvalMs);
    return this.approvals.hold({
      client: session.client.name,
      view,
      name: tool.id,
      arguments: args,
      ...connectionFor(view, tool.id, meta),
      decided,
      askClient: () => this.askApproval(session, tool, args, requestId),
      progress: relay.progress ? (progress, message) => relay.notify('notifications/progress', { progress, message }) : undefined,
    });
  }

  private async askApproval(
    session: GatewaySession,
    tool: LoadedTool,
    args: Record<string, unknown>,
    requestId: RequestId | undefined,
  ): Promise<'approved' | 'approval_required' | 'approval_declined' | 'asked'> {
    // A 2026-07-28 request has no session to ask on: the question goes in its answer, and the client answers by calling again.
    if (!session.server) {
      if (session.clientApproval === 'accept') return 'approved';
      if (session.clientApproval === 'decline') return 'approval_declined';
      if (!session.channel.capabilities()?.elicitation) return 'approval_required';
      session.clientApproval = 'asked';
      return 'asked';
    }
    const caps = session.server.getClientCapabilities();
    if (!caps?.elicitation) return 'approval_required';
    try {
      const answer = await session.server.elicitInput(approvalElicitation(tool, args), {
        timeout: this.deps.config.timeouts.approvalMs,
        ...(requestId !== undefined ? { relatedRequestId: requestId } : {}),
      });
      return answer.action === 'accept' ? 'approved' : 'approval_declined';
    } catch (err) {
      if (err instanceof Error && /does not support/.test(err.message)) return 'approval_required';
      return 'approval_declined';
    }
  }

  /** Coalesces bursts of changes (a publish, an upstream reconnecting) into one pass over the sessions. */
  private queueRefresh(): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    setImmediate(() => {
      this.refreshQueued = false;
      const version = this.deps.policy.current();
      this.deps.metrics.bundleVersion.set(version.ok ? version.current.bundle.version : 0);
      for (const [id, up] of this.deps.upstreams) this.deps.metrics.upstreamUp.set({ upstream: id }, up.isReady() ? 1 : 0);
      for (const s of this.sessions) this.notify(s);
      for (const s of this.listeners) this.notify(s);
    });
  }

  /** Sends tools/list_changed when what the session may see differs from what it was last shown. */
  private notify(session: GatewaySession): void {
    if (session.closed) return;
    const signature = this.list(session).signature;
    if (signature === session.lastSignature) return;
    session.lastSignature = signature;
    if (session.server) void session.server.sendToolListChanged().catch(() => undefined);
    else session.onListChanged?.();
  }
}

/**
 * An upstream's input_required as the client sees it (2026-07-28): its sampling and elicitation
 * requests, an elicitation marked as the upstream's question (never an approval), and the
 * server's requestState, which the listener signs before it leaves. Anything else it asks (roots),
 * or any question from a tool whose result text is redacted, is a refusal (a string).
 */
function inputRequestsFor(loaded: LoadedBundle, toolId: string, server: string, asked: InputRequired): CallToolResult | string {
  if (redactResult(loaded, toolId, { content: [{ type: 'text', text: 'x' }] }).content.length !== 1) {
    return `upstream ${server} asked for input, and ${toolId}'s results are redacted: its server may not ask the client`;
  }
  if (asked.requestState !== undefined && !serverStateFits(asked.requestState)) {
    return `upstream ${server} asked for input with a requestState too large to carry back to it`;
  }
  const entries = Object.entries(asked.inputRequests);
  if (entries.length > MAX_INPUT_REQUESTS) return `upstream ${server} asked for more than ${MAX_INPUT_REQUESTS} inputs at once`;
  const inputRequests: Record<string, unknown> = {};
  for (const [key, request] of entries) {
    // The gateway's own approval question goes by this key: an upstream's question under it would pass for one.
    if (key === APPROVAL_INPUT) return `upstream ${server} asked for input under the key the gateway keeps for its approval question (${APPROVAL_INPUT})`;
    const r = request as { method?: unknown; params?: Record<string, unknown> };
    if (r?.method === 'sampling/createMessage') setOwnMember(inputRequests, key, r);
    else if (r?.method === 'elicitation/create') {
      const params = r.params ?? {};
      setOwnMember(inputRequests, key, {
        ...r,
        params: { ...params, message: `The MCP server "${server}" asks (this is not an approval by Toolgate): ${String(params.message ?? '')}` },
      });
    } else return `upstream ${server} asked for input the gateway does not relay (${String(r?.method).slice(0, 60)})`;
  }
  const out: Record<string, unknown> = { content: [], resultType: 'input_required', inputRequests };
  if (asked.requestState !== undefined) out.requestState = asked.requestState;
  return out as CallToolResult;
}

/** The key of the gateway's own approval question among a 2026-07-28 answer's input requests. */
export const APPROVAL_INPUT = 'toolgate_approval';

/** The question that asks the MCP client itself to confirm a call (only where the roles say `approvals.by: "client"`). */
function approvalElicitation(tool: LoadedTool, args: Record<string, unknown>) {
  let shown = JSON.stringify(args);
  if (shown.length > 2000) shown = `${shown.slice(0, 2000)}…`;
  return {
    mode: 'form' as const,
    message: `Allow the agent to call ${tool.id}?\n\n${tool.def?.description ?? ''}\n\nArguments: ${shown}`,
    requestedSchema: { type: 'object' as const, properties: {} },
  };
}

/** The same question for a 2026-07-28 client: an input request in the call's answer (the listener adds the signed requestState). */
function approvalQuestion(tool: LoadedTool, args: Record<string, unknown>): CallToolResult {
  const inputRequests = { [APPROVAL_INPUT]: { method: 'elicitation/create', params: approvalElicitation(tool, args) } };
  return { content: [], resultType: 'input_required', inputRequests } as CallToolResult;
}

/** A session's channel: its MCP server object, which knows the client's capabilities from initialize. */
function serverChannel(server: Server): ClientChannel {
  return {
    capabilities: () => server.getClientCapabilities(),
    notify: (notification, requestId) =>
      void server.notification(notification, requestId !== undefined ? { relatedRequestId: requestId } : {}).catch(() => undefined),
    request: async (request, schema, options) => (await server.request(request, schema, options)) as Record<string, unknown>,
  };
}

/** MCP's log levels, least severe first. */
const LOG_LEVELS: LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** A tools/call result as the SDK server sends it: checked against CallToolResultSchema, else its error. */
function serializedCallResult(result: CallToolResult): string {
  const checked = callToolResultSchema.safeParse(result);
  if (!checked.success) {
    const message = checked.error instanceof Error ? checked.error.message : String(checked.error);
    throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${message}`);
  }
  return JSON.stringify(checked.data);
}

/**
 * The connection a call runs under, as decide()'s `connectionId` (none: `{}`): the one the client
 * names in `_meta.connectionId`, else, for a tool that needs one, the first connection granted to
 * this client for it (within its configured `connections`, when it has any). MCP clients have no
 * place beside the arguments to pass one, as SDK runtimes do; decide() checks it as for any runtime.
 */
function connectionFor(view: ToolView, name: string, meta: Record<string, unknown> | undefined): { connectionId?: string } {
  const named = meta?.connectionId;
  if (typeof named === 'string') return { connectionId: named };
  const tool = view.loaded.byId.get(name);
  const granted = tool?.requiresConnection ? grantedConnections(view.subject, tool, view.atMs, view.allowedConnectionIds)[0] : undefined;
  return granted === undefined ? {} : { connectionId: granted };
}

/** The refusal of a call to a tool the gateway withholds now: decision, code and message. */
function withheldRefusal(reason: Withheld, toolId: string, decided: Decision, when: string): [Decision, RefusalCode, string] {
  if (reason === 'definition_changed') return ['deny', 'definition_changed', `the upstream definition of ${toolId} changed ${when}`];
  if (reason === 'upstream_unavailable') return [decided, 'upstream_unavailable', `the upstream of ${toolId} is not connected`];
  return ['deny', 'unavailable', `${toolId} is not served by this gateway`];
}

function budgetSpent(session: GatewaySession, limits: Budgets | undefined): string | null {
  if (!limits) return null;
  if (limits.maxRuntimeMs !== undefined && session.usage.runtimeMs >= limits.maxRuntimeMs) {
    return `this client used its runtime budget of ${limits.maxRuntimeMs} ms`;
  }
  if (limits.maxResultBytes !== undefined && session.usage.resultBytes >= limits.maxResultBytes) {
    return `this client used its result budget of ${limits.maxResultBytes} bytes`;
  }
  return null;
}

function toolCacheOf(loaded: LoadedBundle): ToolCache {
  let cache = toolCaches.get(loaded);
  if (!cache) {
    cache = { tools: new Map() };
    toolCaches.set(loaded, cache);
  }
  return cache;
}

const stateDependence = new WeakMap<LoadedBundle, boolean>();

/** Whether any tool of the bundle is available in some workflow states only. */
function stateDependent(loaded: LoadedBundle): boolean {
  let known = stateDependence.get(loaded);
  if (known === undefined) {
    known = loaded.tools.some((t) => {
      const states = (t.def as { availableInStates?: string[] } | undefined)?.availableInStates;
      return states !== undefined && !states.includes('*');
    });
    stateDependence.set(loaded, known);
  }
  return known;
}

/**
 * A listed tool with the `toolgate_state` argument, for clients that pass only what the model
 * writes: the model copies the handle from the last result into the next call.
 */
function withStateArgument(tool: Tool): Tool {
  const schema = tool.inputSchema;
  const argument = {
    type: 'string',
    description: 'Toolgate workflow state: copy _meta.toolgate.state from the previous tool result here, when there was one. Leave out otherwise.',
  };
  return { ...tool, inputSchema: { ...schema, properties: { ...(schema.properties ?? {}), [STATE_ARGUMENT]: argument } } };
}

/** The tool as the client sees it: the Toolgate id, and what the admin reviewed, from the bundle. */
function mcpTool(cache: ToolCache, tool: LoadedTool): Tool {
  const def = tool.def!;
  const out: Tool = {
    name: tool.id,
    description: def.description,
    inputSchema: def.inputSchema as Tool['inputSchema'],
    annotations: { readOnlyHint: def.effect === 'read_only', openWorldHint: def.effect === 'external_side_effect' },
  };
  cache.tools.set(tool.id, out);
  return out;
}
