import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { setOwnMember } from '../runtime/own-member.ts';
import { callToolResultSchema, isPlainObject } from './lean-messages.ts';

/** The upstream methods a call may ask its client through the gateway (everything else is not relayed). */
export type RelayedRequest = 'sampling/createMessage' | 'elicitation/create';
/** The notifications of a call that reach its client. */
export type RelayedNotification = 'notifications/progress' | 'notifications/message';

/**
 * What the gateway relays between one call and the client that made it. `progress`: the client
 * gave a progress token, so the upstream is given one of its own for this call (never the
 * client's, never one for a call whose client gave none), and its progress comes back through
 * `notify` (the gateway puts the client's token back). `request` answers an upstream's request
 * made during the call, or rejects with the JSON-RPC error to answer it with.
 */
export type CallRelay = {
  progress: boolean;
  /** What the calling client can answer (sampling, elicitation): declared to a 2026-07-28 server for this call. */
  answers: { sampling?: object; elicitation?: object };
  /**
   * The client answers questions by retrying (2026-07-28): an upstream's input_required is handed
   * back as it is (InputRequiredError) for the client to answer and call again.
   */
  passThrough?: boolean;
  /** Mcp-Param-* headers of this call (the tool's x-mcp-header arguments), sent to a 2026-07-28 server. */
  headers?: Record<string, string>;
  /** This call is such a retry: the client's answers and the server's state, sent with the first attempt. */
  retry?: { inputResponses: Record<string, unknown>; requestState?: string };
  notify(method: RelayedNotification, params: Record<string, unknown>): void;
  request(method: RelayedRequest, params: Record<string, unknown>): Promise<Record<string, unknown>>;
};

/** What the HTTP transport adds to a message that came on the answer stream of one of its requests. */
export type RelatedExtra = MessageExtraInfo & { relatedRequestId?: RequestId };

type Pending = {
  resolve: (result: CallToolResult) => void;
  reject: (err: unknown) => void;
  timer: NodeJS.Timeout;
  relay: CallRelay | undefined;
  /** A request other than tools/call: its result is handed back as it came (an object). */
  raw?: boolean;
};

const RELAYED_REQUESTS: ReadonlySet<string> = new Set<RelayedRequest>(['sampling/createMessage', 'elicitation/create']);
// A server that keeps asking is not followed for ever.
const MAX_INPUT_ROUNDS = 3;
/** Most input requests one answer of a server may hold, relayed or handed back to the client. */
export const MAX_INPUT_REQUESTS = 10;

export type InputRequired = { inputRequests: Record<string, unknown>; requestState?: string };

/** An upstream's input_required, for a client that answers by retrying the call (see CallRelay.passThrough). */
export class InputRequiredError extends Error {
  constructor(readonly asked: InputRequired) {
    super('the server asked for input');
  }
}

/** The input_required answer an error carries (see settle), if it is one. */
function inputRequiredOf(err: unknown): InputRequired | null {
  const data = (err as { data?: { inputRequired?: unknown; result?: unknown } }).data;
  if (data?.inputRequired !== true || !isPlainObject(data.result)) return null;
  const requests = data.result.inputRequests;
  const state = data.result.requestState;
  return { inputRequests: isPlainObject(requests) ? requests : {}, ...(typeof state === 'string' ? { requestState: state } : {}) };
}

/** The client's answers to a server's input requests, by their keys; any it cannot give fails the call as asking for input. */
async function answerInputs(asked: InputRequired, relay: CallRelay, asking: unknown): Promise<Record<string, unknown>> {
  const entries = Object.entries(asked.inputRequests);
  if (entries.length > MAX_INPUT_REQUESTS) throw asking;
  const answers: Record<string, unknown> = {};
  for (const [key, request] of entries) {
    const method = isPlainObject(request) ? request.method : undefined;
    const params = isPlainObject(request) && isPlainObject(request.params) ? request.params : {};
    if (typeof method !== 'string' || !RELAYED_REQUESTS.has(method)) throw asking;
    try {
      setOwnMember(answers, key, await relay.request(method as RelayedRequest, params));
    } catch {
      throw asking;
    }
  }
  return answers;
}

// The SDK client numbers its own requests 0, 1, 2…: string ids with this prefix never collide with them.
const ID_PREFIX = 'toolgate-call-';

/**
 * tools/call requests to one connected upstream, sent on its transport beside the MCP SDK
 * client's own traffic (initialize, tools/list, notifications). The SDK's request machinery
 * (a handler, a timer and progress bookkeeping per request, and a schema pass that classifies
 * every incoming message) costs more per call than the gateway's policy work; a call needs only
 * an id, a timer and the answer's check. The outcomes are the SDK's: a timeout rejects with
 * RequestTimeout after telling the server the request is cancelled, an error answer rejects with
 * its code, a result that is not a tool result rejects with the schema's issues, a closed
 * connection rejects with ConnectionClosed.
 */
export class UpstreamCalls {
  private next = 0;
  private readonly pending = new Map<string, Pending>();
  private closed = false;
  private results = 0;

  /**
   * Takes the answers to its own requests off `transport` before they reach the SDK client (connect
   * it first). Every other message (notifications, the SDK client's own traffic, answers to calls
   * nobody waits for any more) is unsolicited and must pass `admit` first, which a flood watch
   * refuses; the answers to calls in flight never count against it, however fast they come.
   */
  constructor(
    private readonly transport: Transport,
    private readonly admit: () => boolean = () => true,
    /** The server speaks 2026-07-28: each call declares, in its envelope, what its client can answer. */
    private readonly modern = false,
  ) {
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const settled = this.settle(message);
      if (settled === 'answered' || !this.admit()) return;
      if (settled !== 'other' || this.relayed(message, extra as RelatedExtra | undefined)) return;
      deliver?.call(transport, message, extra);
    };
  }

  /** Calls waiting for their answer. */
  pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Tool results received so far: a count that moves while the server does its work. Error
   * answers do not count: a server stuck on one call may still refuse the others.
   */
  resultCount(): number {
    return this.results;
  }

  /**
   * tools/call. A 2026-07-28 server that answers `input_required` (it needs the user or a model)
   * has its input requests put to the client through `relay` (sampling and elicitation only), and
   * the call is sent again with the answers and the server's `requestState`, a few rounds at most,
   * all within `timeoutMs`. Without a relay, or when the client cannot answer, the call fails as
   * asking for input.
   */
  async call(name: string, args: Record<string, unknown>, timeoutMs: number, relay?: CallRelay): Promise<CallToolResult> {
    const deadline = Date.now() + timeoutMs;
    let retry: Record<string, unknown> = relay?.retry ? { ...relay.retry } : {};
    for (let round = 0; ; round++) {
      try {
        // The call's own id is its progress token upstream: unique on this connection, and nobody else's.
        return await this.send(
          'tools/call',
          (id) => {
            const meta: Record<string, unknown> = {};
            if (relay?.progress) meta.progressToken = id;
            if (this.modern && relay) meta['io.modelcontextprotocol/clientCapabilities'] = relay.answers;
            return { name, arguments: args, ...retry, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) };
          },
          Math.max(1, deadline - Date.now()),
          relay,
        );
      } catch (err) {
        const asked = inputRequiredOf(err);
        if (!asked || !relay || round >= MAX_INPUT_ROUNDS) throw err;
        if (relay.passThrough) throw new InputRequiredError(asked);
        retry = { inputResponses: await answerInputs(asked, relay, err) };
        if (asked.requestState !== undefined) retry.requestState = asked.requestState;
      }
    }
  }

  /** Any other request (tools/list towards a 2026-07-28 server), with the same timeout and cancellation; resolves with its result object. */
  request(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>> {
    return this.send(method, () => params, timeoutMs, undefined, true) as unknown as Promise<Record<string, unknown>>;
  }

  private send(
    method: string,
    paramsFor: (id: string) => Record<string, unknown>,
    timeoutMs: number,
    relay: CallRelay | undefined,
    raw = false,
  ): Promise<CallToolResult> {
    if (this.closed) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    const id = `${ID_PREFIX}${this.next++}`;
    return new Promise<CallToolResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        const reason = 'Request timed out';
        this.transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }).catch(() => undefined);
        reject(new McpError(ErrorCode.RequestTimeout, reason, { timeout: timeoutMs }));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer, relay, raw });
      const options = relay?.headers && Object.keys(relay.headers).length > 0 ? ({ headers: relay.headers } as TransportSendOptions) : undefined;
      this.transport.send({ jsonrpc: '2.0', id, method, params: paramsFor(id) }, options).catch((err) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  /** Every call still waiting fails as over a closed connection; later calls fail at once. */
  close(): void {
    this.closed = true;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    }
  }

  /**
   * Takes what an upstream sends about its calls: progress (matched by the token the call was
   * given; any other token, a stray or a late one, is dropped, never taken for a broken
   * connection), log messages that came on a call's own answer stream, and sampling or
   * elicitation requests of a call (the call whose answer stream carried it, else the only call
   * in flight; with several and no stream to tell, it is refused). True when the message was
   * taken here; the rest goes to the SDK client.
   */
  private relayed(message: JSONRPCMessage, extra: RelatedExtra | undefined): boolean {
    const m = message as { id?: unknown; method?: unknown; params?: unknown };
    if (typeof m.method !== 'string') return false;
    const params = isPlainObject(m.params) ? m.params : {};
    if (m.id === undefined) {
      if (m.method === 'notifications/progress') {
        const token = params.progressToken;
        const call = typeof token === 'string' ? this.pending.get(token) : undefined;
        if (call?.relay?.progress) call.relay.notify('notifications/progress', params);
        return true;
      }
      if (m.method === 'notifications/message') {
        const related = extra?.relatedRequestId;
        const call = typeof related === 'string' ? this.pending.get(related) : undefined;
        if (!call) return false;
        call.relay?.notify('notifications/message', params);
        return true;
      }
      return false;
    }
    if (!RELAYED_REQUESTS.has(m.method)) return false;
    const requestId = m.id as RequestId;
    const answer = (body: { result: Record<string, unknown> } | { error: { code: number; message: string } }) =>
      void this.transport.send({ jsonrpc: '2.0', id: requestId, ...body } as JSONRPCMessage).catch(() => undefined);
    const related = extra?.relatedRequestId;
    let call = typeof related === 'string' ? this.pending.get(related) : undefined;
    if (!call && related === undefined && this.pending.size === 1) call = this.pending.values().next().value;
    if (!call?.relay) {
      answer({ error: { code: ErrorCode.InvalidRequest, message: `${m.method} is relayed only during one call the gateway can tell it belongs to` } });
      return true;
    }
    call.relay.request(m.method as RelayedRequest, params).then(
      (result) => answer({ result }),
      (err: { code?: unknown; message?: unknown }) =>
        answer({ error: { code: typeof err?.code === 'number' ? err.code : ErrorCode.InternalError, message: String(err?.message ?? 'error') } }),
    );
    return true;
  }

  /**
   * Settles the call a message answers: `answered`; `stale` for the answer to one of this object's
   * calls that nobody waits for any more (it timed out); `other` for anything else.
   */
  private settle(message: JSONRPCMessage): 'answered' | 'stale' | 'other' {
    const m = message as { id?: unknown; result?: unknown; error?: unknown; method?: unknown };
    if (typeof m.id !== 'string' || !m.id.startsWith(ID_PREFIX) || m.method !== undefined) return 'other';
    const p = this.pending.get(m.id);
    if (!p) return 'stale';
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.error !== undefined) {
      const e = isPlainObject(m.error) ? m.error : {};
      const code = typeof e.code === 'number' ? e.code : ErrorCode.InternalError;
      p.reject(new McpError(code, typeof e.message === 'string' ? e.message : 'error', e.data));
      return 'answered';
    }
    if (isPlainObject(m.result) && m.result.resultType === 'input_required') {
      // A 2026-07-28 server asking for input by retry: the gateway does not relay it.
      p.reject(new McpError(ErrorCode.InvalidRequest, 'the server asked for input', { inputRequired: true, result: m.result }));
      return 'answered';
    }
    if (p.raw) {
      if (isPlainObject(m.result)) p.resolve(m.result as CallToolResult);
      else p.reject(new McpError(ErrorCode.InternalError, 'the result is not an object', { issues: ['result'] }));
      return 'answered';
    }
    const parsed = callToolResultSchema.safeParse(m.result);
    if (parsed.success) {
      this.results++;
      p.resolve(parsed.data);
    } else p.reject(parsed.error);
    return 'answered';
  }
}
