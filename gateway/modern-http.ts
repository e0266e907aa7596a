import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, ClientCapabilities, LoggingLevel, RequestId, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { argumentsDigest } from '../runtime/approval-receipt.ts';
import type { ResolvedClient } from './config.ts';
import { unreadableArgumentsOf } from './call-arguments-text.ts';
import { APPROVAL_INPUT, type ClientChannel, type Gateway, LIST_TTL_MS, STATE_ARGUMENT } from './gateway.ts';
import { isPlainObject } from './lean-messages.ts';
import { decodeHeaderValue, paramHeaderMismatch } from './param-headers.ts';
import type { StateHandles } from './state-handles.ts';

/** The stateless revision, served beside 2025-11-25 (sessions), chosen per request. */
export const MODERN_VERSION = '2026-07-28';
export const MODERN_VERSIONS: readonly string[] = [MODERN_VERSION];
/** What server/discover advertises: the stateless revision, and the session revision reached through initialize. */
const ALL_VERSIONS = [MODERN_VERSION, '2025-11-25'];
// The session revisions: a request naming one of these (or carrying a session id) is a 2025-era request.
const LEGACY_VERSIONS: ReadonlySet<string> = new Set(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07']);

const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const LOG_LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);

// MCP 2026-07-28's own error codes.
const HEADER_MISMATCH = -32020;
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export type ModernContext = {
  gateway: Gateway;
  handles: StateHandles;
  version: string;
  instructions: string;
  /** Most subscriptions/listen streams one client holds open (as limits.sessionsPerClient bounds sessions). */
  listensPerClient: number;
  /** Open listen streams by client name. */
  listening: Map<string, number>;
  /** A comment line on an idle listen stream this often (default 15 s). */
  keepAliveMs?: number;
};

const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';

/**
 * Whether a POST is a 2026-07-28 request: no session id, not initialize, and either a protocol
 * version header that is not a session revision or the per-request `_meta` version (a
 * server/discover probe counts too). Everything else goes the session way, as before.
 */
export function isModernRequest(req: IncomingMessage, body: unknown): boolean {
  if (req.method !== 'POST' || req.headers['mcp-session-id'] !== undefined) return false;
  if (!isPlainObject(body) || body.method === 'initialize') return false;
  const header = req.headers['mcp-protocol-version'];
  if (typeof header === 'string' && !LEGACY_VERSIONS.has(header)) return true;
  const meta = isPlainObject(body.params) ? body.params._meta : undefined;
  return body.method === 'server/discover' || (isPlainObject(meta) && meta[VERSION_KEY] !== undefined);
}

/**
 * One 2026-07-28 request over streamable HTTP, answered on its own: no initialize, no session, the
 * version and the client's capabilities from the request's `_meta`, the `Mcp-Method`/`Mcp-Name`
 * headers checked against the body, the workflow state from a signed handle the request presents.
 * The answer is one JSON body, or an SSE stream when the call has progress or log messages for
 * the client before its result.
 */
export async function handleModernRequest(ctx: ModernContext, client: ResolvedClient, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') {
    return sendError(res, 400, null, ErrorCode.InvalidRequest, 'Invalid Request: one JSON-RPC request per POST (2026-07-28 has no batches)');
  }
  const id = body.id;
  if (id === undefined) {
    // Notifications (notifications/cancelled on stdio only) carry nothing for this transport to act on.
    res.writeHead(202).end();
    return;
  }
  if (!(typeof id === 'string' || Number.isSafeInteger(id)))
    return sendError(res, 400, null, ErrorCode.InvalidRequest, 'Invalid Request: the id must be a string or an integer');
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return sendError(res, 406, id as RequestId, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
  }
  const method = body.method;
  if (body.params !== undefined && !isPlainObject(body.params))
    return sendError(res, 200, id as RequestId, ErrorCode.InvalidParams, 'params must be an object');
  const params = (body.params ?? {}) as Record<string, unknown>;
  const meta = isPlainObject(params._meta) ? params._meta : {};

  const header = req.headers['mcp-protocol-version'];
  const version = meta[VERSION_KEY];
  if (typeof header !== 'string') return mismatch(res, id as RequestId, 'the MCP-Protocol-Version header is required');
  if (version !== header) return mismatch(res, id as RequestId, `MCP-Protocol-Version header '${header.slice(0, 40)}' does not match _meta ${VERSION_KEY}`);
  if (!MODERN_VERSIONS.includes(header)) {
    return sendJson(res, 400, {
      jsonrpc: '2.0',
      id,
      error: {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: `Unsupported protocol version: ${header.slice(0, 40)}`,
        data: { supported: MODERN_VERSIONS, requested: header.slice(0, 40) },
      },
    });
  }
  if (req.headers['mcp-method'] !== method) return mismatch(res, id as RequestId, `the Mcp-Method header does not match the method ${method.slice(0, 100)}`);
  if (method === 'tools/call') {
    const name = decodeHeaderValue(req.headers['mcp-name']);
    if (name === null || name !== params.name) return mismatch(res, id as RequestId, 'the Mcp-Name header does not match params.name');
    // Arguments the tool's schema mirrors into Mcp-Param-* headers must be the same in both; a call
    // without arguments carries none of them, so a header beside it did not come from its body.
    const given = isPlainObject(params.arguments) ? params.arguments : {};
    const wrong = paramHeaderMismatch(ctx.gateway.inputSchemaOf(String(params.name)), given, req.headers);
    if (wrong) return mismatch(res, id as RequestId, wrong);
  }
  const capabilities = meta[CAPABILITIES_KEY];
  if (!isPlainObject(capabilities)) return sendError(res, 200, id as RequestId, ErrorCode.InvalidParams, `_meta ${CAPABILITIES_KEY} is required (an object)`);

  if (method === 'server/discover') return sendJson(res, 200, { jsonrpc: '2.0', id, result: discoverResult(ctx, true) });
  if (method !== 'tools/list' && method !== 'tools/call' && method !== 'subscriptions/listen') {
    return sendError(res, 404, id as RequestId, ErrorCode.MethodNotFound, `Method not found: ${method.slice(0, 100)}`);
  }

  const presented = presentedState(ctx, client, method, params, meta);
  if (!presented.ok) return sendError(res, 200, id as RequestId, ErrorCode.InvalidParams, presented.message, presented.data);
  const { state, args } = presented;
  const level = requestedLogLevel(meta);
  const answer = new ModernAnswer(res, id as RequestId);
  const caller = ctx.gateway.requestCaller(client, state, answer.channel(capabilities as ClientCapabilities), level);
  if (level === undefined) answer.dropLogs = true;
  res.once('close', () => {
    caller.closed = true;
  });

  if (method === 'tools/list') {
    const page = listPage(ctx.gateway, caller, params.cursor);
    if (page instanceof McpError) return sendError(res, 200, id as RequestId, page.code, page.message);
    return answer.finishRaw(page);
  }
  if (method === 'subscriptions/listen') return listen(ctx, client, caller, id as RequestId, params, res);

  let result: Record<string, unknown>;
  try {
    result = await modernCall(ctx, client, caller, id as RequestId, params, meta, args, unreadableArgumentsOf(body));
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    return sendError(res, 200, id as RequestId, err.code, err.message, err.data);
  }
  answer.finish(result);
}

/** server/discover's answer; `listen`: whether this transport serves subscriptions/listen. */
function discoverResult(ctx: Pick<ModernContext, 'instructions' | 'version'>, listen: boolean): Record<string, unknown> {
  return {
    resultType: 'complete',
    supportedVersions: ALL_VERSIONS,
    capabilities: { tools: listen ? { listChanged: true } : {} },
    instructions: ctx.instructions,
    ttlMs: LIST_TTL_MS,
    cacheScope: 'public',
    _meta: { [SERVER_INFO_KEY]: { name: 'toolgate-gateway', version: ctx.version } },
  };
}

type Presented = { ok: true; state: string; args: Record<string, unknown> | undefined } | { ok: false; message: string; data?: { pointer: string } };

/** The workflow state a request presents: a handle in _meta or, for tools/call, as the argument; none is the configured state. */
function presentedState(
  ctx: Pick<ModernContext, 'handles'>,
  client: ResolvedClient,
  method: string,
  params: Record<string, unknown>,
  meta: Record<string, unknown>,
): Presented {
  const args = method === 'tools/call' ? params.arguments : undefined;
  if (args !== undefined && !isPlainObject(args)) return { ok: false, message: 'params.arguments must be an object' };
  const inMeta = isPlainObject(meta.toolgate) ? meta.toolgate.state : undefined;
  const inArgs = args?.[STATE_ARGUMENT];
  if (inMeta !== undefined && inArgs !== undefined && inMeta !== inArgs) {
    return { ok: false, message: `two different state handles: _meta.toolgate.state and arguments.${STATE_ARGUMENT}` };
  }
  const presented = inMeta ?? inArgs;
  if (presented === undefined) return { ok: true, state: client.initialState, args };
  const read = ctx.handles.read(client, presented);
  if (read.ok) return { ok: true, state: read.state, args };
  const pointer = inMeta !== undefined ? '/params/_meta/toolgate/state' : `/params/arguments/${STATE_ARGUMENT}`;
  return { ok: false, message: `${read.message} (${pointer})`, data: { pointer } };
}

/** tools/call for a 2026-07-28 request: the handle argument stripped, the result typed, the moved state handed back signed. */
async function modernCall(
  ctx: Pick<ModernContext, 'gateway' | 'handles'>,
  client: ResolvedClient,
  caller: ReturnType<Gateway['requestCaller']>,
  id: RequestId,
  params: Record<string, unknown>,
  meta: Record<string, unknown>,
  args: Record<string, unknown> | undefined,
  /** The arguments' text, when it is not I-JSON (see call-arguments-text.ts). */
  argumentsText?: string,
): Promise<Record<string, unknown>> {
  const callArgs = { ...(args ?? {}) };
  delete callArgs[STATE_ARGUMENT];
  const name = String(params.name ?? '');
  // Arguments that are not I-JSON are refused (by decide) before anything is asked or answered: no digest of them is needed.
  const digest = argumentsText === undefined ? callDigest(callArgs, meta.connectionId) : '';
  // A retry with the answers to an upstream's input requests: only with the requestState this gateway issued for this very call.
  if (argumentsText === undefined && (params.inputResponses !== undefined || params.requestState !== undefined)) {
    if (params.inputResponses !== undefined && !isPlainObject(params.inputResponses)) {
      throw new Refused(ErrorCode.InvalidParams, 'params.inputResponses must be an object (/params/inputResponses)', { pointer: '/params/inputResponses' });
    }
    const read = ctx.handles.readRetry(client, params.requestState, name, digest);
    if (!read.ok) throw new Refused(ErrorCode.InvalidParams, `${read.message} (/params/requestState)`, { pointer: '/params/requestState' });
    // The answer to the gateway's own approval question: it never reaches the upstream.
    const answer = read.approval === 'asked' ? approvalAnswer(params.inputResponses) : null;
    if (read.approval === 'asked' && !answer) {
      const pointer = `/params/inputResponses/${APPROVAL_INPUT}`;
      throw new Refused(ErrorCode.InvalidParams, `the approval question needs an elicitation result (accept, decline or cancel) (${pointer})`, { pointer });
    }
    // One confirmation, one call: a requestState that carries the client's answer is taken once.
    const spent = read.approval === undefined || ctx.handles.spendConfirmation(client, params.requestState as string);
    if (spent !== true) {
      const why =
        spent === 'answered'
          ? 'the requestState was answered already; call again without it'
          : 'this client answered more approval questions in the last 10 minutes than the gateway remembers; call again later';
      throw new Refused(ErrorCode.InvalidParams, `${why} (/params/requestState)`, { pointer: '/params/requestState' });
    }
    if (answer) {
      caller.clientApproval = answer;
    } else {
      if (read.approval === 'confirmed') caller.clientApproval = 'accept';
      caller.inputRetry = {
        inputResponses: (params.inputResponses as Record<string, unknown> | undefined) ?? {},
        ...(read.serverState !== undefined ? { requestState: read.serverState } : {}),
      };
    }
  }
  const presented = caller.state;
  const result = (await ctx.gateway.call(caller, { name, arguments: callArgs, _meta: meta }, id, argumentsText)) as CallToolResult & {
    resultType?: string;
    requestState?: string;
  };
  if (result.resultType === 'input_required') {
    const { content: _none, ...asked } = result;
    // The gateway's approval question, or the upstream's questions after the client confirmed: the next round must not ask again.
    const approval = caller.clientApproval === 'asked' ? 'asked' : caller.clientApproval === 'accept' ? 'confirmed' : undefined;
    return { ...asked, requestState: ctx.handles.issueRetry(client, name, digest, result.requestState, approval) };
  }
  const toolgate = (result._meta as { toolgate?: Record<string, unknown> } | undefined)?.toolgate;
  // A call that moved the state answers a handle, back to the configured state too: without one the
  // client would keep presenting its last handle and stay in the state the call left.
  if (toolgate && (caller.state !== client.initialState || caller.state !== presented)) toolgate.state = ctx.handles.issue(client, caller.state);
  return { ...result, resultType: 'complete' };
}

/** The client's answer to the approval question (an elicitation result under APPROVAL_INPUT): cancel counts as decline. */
function approvalAnswer(responses: unknown): 'accept' | 'decline' | null {
  const answer = isPlainObject(responses) ? responses[APPROVAL_INPUT] : undefined;
  const action = isPlainObject(answer) ? answer.action : undefined;
  if (action === 'accept') return 'accept';
  if (action === 'decline' || action === 'cancel') return 'decline';
  return null;
}

/** A request refused with a JSON-RPC error (its message as the client sees it). */
class Refused extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * The log level a 2026-07-28 request names in its _meta; undefined when it names none (or an
 * unknown one): then the client asked for no log messages.
 */
function requestedLogLevel(meta: Record<string, unknown>): LoggingLevel | undefined {
  const level = meta[LOG_LEVEL_KEY];
  return LOG_LEVELS.has(level as string) ? (level as LoggingLevel) : undefined;
}

/** A tools/list page, or the invalid-params error of a cursor that names no page of this list (MCP pagination). */
function listPage(gateway: Gateway, caller: ReturnType<Gateway['requestCaller']>, cursor: unknown): Buffer | McpError {
  try {
    return gateway.modernList(caller, cursor);
  } catch (err) {
    if (!(err instanceof McpError)) throw err;
    return err;
  }
}

/**
 * What a requestState is bound to besides client and tool: sha-256 of the canonical JSON of the
 * arguments and the connection the call names in its _meta (see connectionFor in gateway.ts). The
 * connection is part of the call: a confirmation given for it through one connection must not let
 * it through another, as a person's approval does not (approval-hold.ts).
 */
function callDigest(args: Record<string, unknown>, connectionId: unknown): string {
  return argumentsDigest({ arguments: args, connectionId: typeof connectionId === 'string' ? connectionId : null });
}

/** Whether a message on a stdio connection is a 2026-07-28 request (it carries the per-request version). */
export function isModernMessage(message: unknown): boolean {
  if (!isPlainObject(message) || message.method === 'initialize' || message.id === undefined || typeof message.method !== 'string') return false;
  const meta = isPlainObject(message.params) ? message.params._meta : undefined;
  return isPlainObject(meta) && meta[VERSION_KEY] !== undefined;
}

/**
 * One 2026-07-28 request over stdio (the one configured client): as over HTTP, without the
 * headers; notifications of the call go out as messages before its answer. subscriptions/listen
 * is not served on stdio.
 */
export async function answerModernMessage(
  ctx: Pick<ModernContext, 'gateway' | 'handles' | 'version' | 'instructions'>,
  client: ResolvedClient,
  message: Record<string, unknown>,
  send: (message: Record<string, unknown>) => void,
): Promise<void> {
  const id = message.id as RequestId;
  const reply = (body: { result: unknown } | { error: Record<string, unknown> }) => send({ jsonrpc: '2.0', id, ...body });
  const fail = (code: number, text: string, data?: unknown) => reply({ error: data === undefined ? { code, message: text } : { code, message: text, data } });
  const method = message.method as string;
  if (message.params !== undefined && !isPlainObject(message.params)) return fail(ErrorCode.InvalidParams, 'params must be an object');
  const params = (message.params ?? {}) as Record<string, unknown>;
  const meta = params._meta as Record<string, unknown>;
  const version = meta[VERSION_KEY];
  if (typeof version !== 'string' || !MODERN_VERSIONS.includes(version)) {
    const requested = String(version).slice(0, 40);
    return fail(UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${requested}`, { supported: MODERN_VERSIONS, requested });
  }
  const capabilities = meta[CAPABILITIES_KEY];
  if (!isPlainObject(capabilities)) return fail(ErrorCode.InvalidParams, `_meta ${CAPABILITIES_KEY} is required (an object)`);
  if (method === 'server/discover') return reply({ result: discoverResult(ctx, false) });
  if (method !== 'tools/list' && method !== 'tools/call') return fail(ErrorCode.MethodNotFound, `Method not found: ${method.slice(0, 100)}`);
  const presented = presentedState(ctx, client, method, params, meta);
  if (!presented.ok) return fail(ErrorCode.InvalidParams, presented.message, presented.data);
  const level = requestedLogLevel(meta);
  const channel: ClientChannel = {
    capabilities: () => capabilities as ClientCapabilities,
    notify: (notification) => {
      if (notification.method === 'notifications/message' && level === undefined) return;
      send({ jsonrpc: '2.0', ...notification });
    },
    request: async () => {
      throw new McpError(ErrorCode.InvalidRequest, 'the client speaks MCP 2026-07-28: it cannot be asked during a call');
    },
  };
  const caller = ctx.gateway.requestCaller(client, presented.state, channel, level);
  if (method === 'tools/list') {
    const page = listPage(ctx.gateway, caller, params.cursor);
    if (page instanceof McpError) return fail(page.code, page.message);
    return reply({ result: JSON.parse(page.toString('utf8')) });
  }
  try {
    reply({ result: await modernCall(ctx, client, caller, id, params, meta, presented.args, unreadableArgumentsOf(message)) });
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    fail(err.code, err.message, err.data);
  }
}

/**
 * subscriptions/listen: an SSE stream that stays open and says `notifications/tools/list_changed`
 * whenever what this client, in the state the request presented, may see changes (a publish, a
 * drift, an upstream lost or back). Only tool list changes are offered; the acknowledgement names
 * what was agreed, and every notification carries the subscription's id.
 */
function listen(
  ctx: ModernContext,
  client: ResolvedClient,
  caller: ReturnType<Gateway['requestCaller']>,
  id: RequestId,
  params: Record<string, unknown>,
  res: ServerResponse,
): void {
  const wanted = params.notifications;
  if (!isPlainObject(wanted))
    return sendError(res, 200, id, ErrorCode.InvalidParams, 'params.notifications is required (an object) (/params/notifications)', {
      pointer: '/params/notifications',
    });
  const open = ctx.listening.get(client.name) ?? 0;
  if (open >= ctx.listensPerClient) {
    res.setHeader('retry-after', '5');
    return sendError(res, 429, id, -32000, `Too many open subscriptions: this client holds ${ctx.listensPerClient}`);
  }
  ctx.listening.set(client.name, open + 1);
  const agreed: Record<string, unknown> = wanted.toolsListChanged === true ? { toolsListChanged: true } : {};
  const event = (method: string, p: Record<string, unknown> = {}) =>
    res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method, params: { ...p, _meta: { [SUBSCRIPTION_ID_KEY]: id } } })}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
  event('notifications/subscriptions/acknowledged', { notifications: agreed });
  const unsubscribe = agreed.toolsListChanged ? ctx.gateway.subscribe(caller, () => event('notifications/tools/list_changed')) : () => undefined;
  const keepAlive = setInterval(() => res.write(':\n\n'), ctx.keepAliveMs ?? 15_000);
  keepAlive.unref();
  res.once('close', () => {
    clearInterval(keepAlive);
    unsubscribe();
    const left = (ctx.listening.get(client.name) ?? 1) - 1;
    if (left <= 0) ctx.listening.delete(client.name);
    else ctx.listening.set(client.name, left);
  });
}

/**
 * The answer of one 2026-07-28 request: a JSON body, turned into an SSE stream when a
 * notification of the request (progress, a log message) must reach the client before the result.
 */
class ModernAnswer {
  private sse = false;
  dropLogs = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly id: RequestId,
  ) {}

  channel(capabilities: ClientCapabilities): ClientChannel {
    return {
      capabilities: () => capabilities,
      notify: (notification) => this.notify(notification),
      // 2026-07-28 has no server-initiated requests: an upstream's question cannot reach this client during the call.
      request: async () => {
        throw new McpError(ErrorCode.InvalidRequest, 'the client speaks MCP 2026-07-28: it cannot be asked during a call');
      },
    };
  }

  private notify(notification: ServerNotification): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    if (notification.method === 'notifications/message' && this.dropLogs) return;
    if (!this.sse) {
      this.sse = true;
      this.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
    }
    this.res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...notification })}\n\n`);
  }

  finish(result: unknown): void {
    this.finishRaw(JSON.stringify(result));
  }

  finishRaw(result: string | Buffer): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    const pieces = ['{"jsonrpc":"2.0","id":', JSON.stringify(this.id), ',"result":', result, '}'];
    const body = pieces.every((p) => typeof p === 'string') ? pieces.join('') : Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
    if (this.sse) {
      this.res.end(
        typeof body === 'string' ? `event: message\ndata: ${body}\n\n` : Buffer.concat([Buffer.from('event: message\ndata: '), body, Buffer.from('\n\n')]),
      );
      return;
    }
    this.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    this.res.end(body);
  }
}

function mismatch(res: ServerResponse, id: RequestId, message: string): void {
  sendError(res, 400, id, HEADER_MISMATCH, `Header mismatch: ${message}`);
}

function sendError(res: ServerResponse, status: number, id: RequestId | null, code: number, message: string, data?: unknown): void {
  const error: Record<string, unknown> = { code, message };
  if (data !== undefined) error.data = data;
  sendJson(res, status, { jsonrpc: '2.0', ...(id === null ? {} : { id }), error });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
