import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { type EventSourceMessage, type EventSourceParser, createParser } from 'eventsource-parser';
import { isLeanResultResponse } from './lean-messages.ts';
import { encodeHeaderValue } from './param-headers.ts';
import type { RelatedExtra } from './upstream-calls.ts';
import { Pool, request } from 'undici';
import type { Dispatcher } from 'undici';
import { StringDecoder } from 'node:string_decoder';

export type HttpUpstreamTransportOptions = {
  /** Extra request headers from the configuration (e.g. Authorization). */
  headers?: Record<string, string>;
  /** Most connections kept open to the upstream (default 128). */
  connections?: number;
  /** Wait before reopening the server's notification stream after it ended (default 1 s). */
  reopenMs?: number;
  /** The most bytes of one JSON answer or one SSE event held before the answer is cut off (default 16 MiB). */
  maxMessageBytes?: number;
  /** Wait before resuming a request's answer stream when the server gave no `retry` (default 1 s). */
  resumeMs?: number;
  /**
   * Speak MCP 2026-07-28 (stateless) to this server: every request carries the version and the
   * gateway's capabilities in `_meta` and the MCP-Protocol-Version, Mcp-Method and Mcp-Name
   * headers; no session, no notification stream, and a cancellation only closes the answer.
   */
  modern?: { version: string };
};

/**
 * Where a request's answer stream is: the last event id the server gave (its resumption cursor),
 * the wait it asked for before reconnecting, and whether the answer came.
 */
type StreamCursor = { requestId: RequestId | undefined; lastEventId: string | undefined; retryMs: number | undefined; answered: boolean };

/** Something reading a request's answer that the caller may stop (the POST, or a resumed stream). */
type OpenAnswer = { cancel(): void };

// A server that keeps ending a stream without sending anything new is not resumed for ever.
const MAX_IDLE_RESUMPTIONS = 5;
// However long a server asks to wait, the call's own timeout bounds the whole answer anyway.
const MAX_RESUME_WAIT_MS = 30_000;

const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** An answer or event larger than the transport holds: the request is aborted, nothing of it delivered. */
export class AnswerTooLargeError extends Error {
  readonly code = 'answer_too_large';
  constructor(limit: number) {
    super(`the upstream sent a message larger than ${limit} bytes`);
  }
}

type Mode = 'accepted' | 'refused' | 'events' | 'json' | 'unexpected';

/**
 * One POST's answer, read straight off the connection (undici's dispatch handler interface, no
 * body stream): send() settles once the server accepted the message (at the headers of an SSE
 * answer, after a JSON body) or refused it; the answers it carries go to the transport.
 */
class PostHandler implements Dispatcher.DispatchHandler {
  private mode: Mode = 'unexpected';
  private status = 0;
  private type = '';
  private settled = false;
  private readonly chunks: Buffer[] = [];
  private parser: EventSourceParser | undefined;
  // StringDecoder rather than TextDecoder: a streaming TextDecoder opens a native converter per answer.
  private decoder: StringDecoder | undefined;
  /** Bytes of the JSON body, or held since the last SSE event ended: bounded, so no upstream can fill the memory. */
  private held = 0;
  private controller: Dispatcher.DispatchController | undefined;
  private cancelled = false;
  private readonly cursor: StreamCursor;

  constructor(
    private readonly transport: HttpUpstreamTransport,
    private readonly initializedNotice: boolean,
    private readonly resolve: () => void,
    private readonly reject: (err: Error) => void,
    /** The id of the request this POST carries, while its answer is open (see cancel). */
    private readonly requestId?: RequestId,
  ) {
    this.cursor = { requestId, lastEventId: undefined, retryMs: undefined, answered: false };
  }

  // Its presence marks the handler as undici's current (controller-based) interface.
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.cancelled) controller.abort(new Error('cancelled'));
  }

  /**
   * The caller gave up on the request (it timed out): its answer is no longer read, so an upstream
   * that trickles an answer forever does not keep a connection and its bytes held for it.
   */
  cancel(): void {
    this.cancelled = true;
    this.controller?.abort(new Error('cancelled'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return;
    this.status = statusCode;
    this.transport.answered(headers);
    this.type = String(headers['content-type'] ?? '');
    if (statusCode === 202) this.mode = 'accepted';
    else if (statusCode >= 300) this.mode = 'refused';
    else if (this.type.includes('text/event-stream')) {
      this.mode = 'events';
      this.decoder = new StringDecoder('utf8');
      this.parser = createParser({ onEvent: (event) => onEvent(this.transport, event, this.cursor), onRetry: (ms) => (this.cursor.retryMs = ms) });
      // The answers come as events; send() is done once the server accepted the message.
      this.settle();
    } else if (this.type.includes('application/json')) this.mode = 'json';
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.mode === 'events') {
      const text = this.decoder!.write(chunk);
      this.parser!.feed(text);
      this.held = heldAfter(this.held, chunk.length, text);
    } else if (this.mode === 'json' || (this.mode === 'refused' && this.held < MAX_REFUSAL_BYTES)) {
      this.held += chunk.length;
      this.chunks.push(chunk);
    } else return;
    if (this.held > this.transport.maxMessageBytes) {
      this.mode = 'unexpected';
      this.chunks.length = 0;
      controller.abort(new AnswerTooLargeError(this.transport.maxMessageBytes));
    }
  }

  onResponseEnd(): void {
    this.transport.closedAnswer(this.requestId, this);
    if (this.mode === 'events') {
      // The server may end a request's stream before its answer (2025-11-25): resume it.
      if (!this.cancelled) this.transport.resumeIfCut(this.cursor);
      return;
    }
    if (this.mode === 'accepted') {
      this.settle();
      if (this.initializedNotice) this.transport.initialized();
    } else if (this.mode === 'refused') {
      // Only a 2026-07-28 server's refusal carries an error of the revision's own; a 2025 server's is its status.
      this.settle(
        this.transport.modern
          ? refusal(this.status, Buffer.concat(this.chunks))
          : new StreamableHTTPError(this.status, `Error POSTing to endpoint (HTTP ${this.status})`),
      );
    } else if (this.mode === 'json') {
      this.settle();
      this.transport.deliverText(this.chunks.length === 1 ? this.chunks[0].toString('utf8') : Buffer.concat(this.chunks).toString('utf8'));
    } else {
      this.settle(new StreamableHTTPError(-1, `Unexpected content type: ${this.type.slice(0, 100)}`));
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.transport.closedAnswer(this.requestId, this);
    if (!this.settled) this.settle(err);
    else if (this.cancelled) return;
    // A stream cut after the server gave a cursor is resumed; one cut without a cursor is a failure.
    else if (this.mode !== 'events' || err instanceof AnswerTooLargeError || !this.transport.resumeIfCut(this.cursor)) this.transport.failed(err);
  }

  private settle(err?: Error): void {
    if (this.settled) return;
    this.settled = true;
    if (err) this.reject(err);
    else this.resolve();
  }
}

// A refused POST's body is read this far, for the JSON-RPC error a 2026-07-28 server puts in it.
const MAX_REFUSAL_BYTES = 64 * 1024;

/**
 * A refused POST as an error: the JSON-RPC error in its body when there is one (2026-07-28 servers
 * answer 400 with -32020, -32021 or -32022), else the HTTP status.
 */
function refusal(status: number, body: Buffer): Error {
  try {
    const parsed = JSON.parse(body.subarray(0, MAX_REFUSAL_BYTES).toString('utf8')) as { error?: { code?: unknown } };
    const code = parsed.error?.code;
    if (Number.isSafeInteger(code)) return new McpError(code as number, `Error POSTing to endpoint (HTTP ${status})`, { httpStatus: status });
  } catch {
    // Not JSON: the status says it all.
  }
  return new StreamableHTTPError(status, `Error POSTing to endpoint (HTTP ${status})`);
}

/** The gateway's own envelope on a 2026-07-28 request: it asks nothing of the server's clients. */
const GATEWAY_CLIENT_INFO = { name: 'toolgate-gateway', version: '1' };

/** A request as 2026-07-28 sends it: the `_meta` envelope in the body, the same facts in headers. */
function modernRequest(message: JSONRPCMessage, method: string, version: string): [JSONRPCMessage, Record<string, string>] {
  const m = message as { params?: Record<string, unknown> };
  const params = { ...(m.params ?? {}) };
  params._meta = {
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': GATEWAY_CLIENT_INFO,
    ...((params._meta as Record<string, unknown> | undefined) ?? {}),
  };
  const headers: Record<string, string> = { 'mcp-protocol-version': version, 'mcp-method': method };
  const name = method === 'tools/call' ? params.name : undefined;
  if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);
  return [{ ...message, params } as JSONRPCMessage, headers];
}

/**
 * Whether the server at `url` speaks MCP 2026-07-28: a `server/discover` answered with a result
 * that lists the version. Anything else (a 2025 server's 400 or 404, an error, no answer within
 * `timeoutMs`) is false, and the gateway talks to it with initialize and sessions, as before.
 */
export async function speaksModern(url: URL, headers: Record<string, string>, version: string, timeoutMs: number): Promise<boolean> {
  const [message, extra] = modernRequest({ jsonrpc: '2.0', id: 'toolgate-discover', method: 'server/discover', params: {} }, 'server/discover', version);
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra },
      body: JSON.stringify(message),
      // undici's request() follows no redirects: an upstream's URL is configured, not found.
      signal: AbortSignal.timeout(timeoutMs),
    });
    const type = String(res.headers['content-type'] ?? '');
    if (res.statusCode !== 200) {
      await res.body.dump();
      return false;
    }
    let text = await res.body.text();
    if (text.length > 1_000_000) return false;
    // An SSE answer: the data of its message event.
    if (type.includes('text/event-stream'))
      text =
        text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .filter(Boolean)
          .at(-1) ?? '';
    const answer = JSON.parse(text) as { result?: { supportedVersions?: unknown } };
    return Array.isArray(answer.result?.supportedVersions) && answer.result.supportedVersions.includes(version);
  } catch {
    return false;
  }
}

/**
 * What an SSE reader may still be buffering after a chunk: the bytes since the last blank line,
 * which ends every event, comment and keep-alive (the parser keeps nothing from before it).
 * Counted per chunk, so a boundary split across two chunks is seen at the next one.
 */
function heldAfter(held: number, chunkBytes: number, text: string): number {
  const end = Math.max(boundaryEnd(text, '\n\n'), boundaryEnd(text, '\r\r'), boundaryEnd(text, '\r\n\r\n'));
  return end < 0 ? held + chunkBytes : text.length - end;
}

function boundaryEnd(text: string, blank: string): number {
  const at = text.lastIndexOf(blank);
  return at < 0 ? -1 : at + blank.length;
}

function onEvent(transport: HttpUpstreamTransport, event: EventSourceMessage, cursor?: StreamCursor): void {
  if (cursor && event.id !== undefined) cursor.lastEventId = event.id;
  // Empty data is a priming event (resumption cursor only).
  if ((event.event === undefined || event.event === 'message') && event.data !== '') transport.deliverText(event.data, cursor);
}

/**
 * The client side of MCP's streamable HTTP transport towards one upstream, on a keep-alive undici
 * connection pool. The SDK's StreamableHTTPClientTransport goes through WHATWG fetch and web
 * streams for every message, which on the gateway's hot path costs more than the call itself;
 * this transport speaks the same protocol (POST per message with JSON or SSE answers, the GET
 * stream for server notifications, session id and protocol version headers) with one undici
 * request per message. Redirects are not followed: an upstream's URL is configured, not found.
 */
export class HttpUpstreamTransport implements Transport {
  sessionId?: string;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private protocolVersion: string | undefined;
  private readonly pool: Pool;
  private readonly path: string;
  private readonly aborter = new AbortController();
  private readonly headers: Record<string, string>;
  private closed = false;
  private reopenTimer: NodeJS.Timeout | undefined;
  /** What reads the answers of requests still open, by request id: a cancellation ends it. */
  private readonly openAnswers = new Map<RequestId, OpenAnswer>();
  /** @internal Whether the server is spoken to in 2026-07-28. */
  get modern(): boolean {
    return this.options.modern !== undefined;
  }
  /** @internal The most bytes of one message held (see HttpUpstreamTransportOptions). */
  readonly maxMessageBytes: number;

  constructor(
    url: URL,
    private readonly options: HttpUpstreamTransportOptions = {},
  ) {
    this.path = `${url.pathname}${url.search}`;
    this.headers = { ...(options.headers ?? {}) };
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    // Timeouts belong to the caller (the per-call limit); a long silent call or notification stream is normal.
    this.pool = new Pool(url.origin, { connections: options.connections ?? 128, headersTimeout: 0, bodyTimeout: 0 });
  }

  async start(): Promise<void> {}

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  /** `options.headers`: a 2026-07-28 call's Mcp-Param-* headers. */
  send(message: JSONRPCMessage, options?: TransportSendOptions & { headers?: Record<string, string> }): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the transport is closed'));
    const method = 'method' in message ? message.method : undefined;
    if (method === 'notifications/cancelled') {
      const cancelled = (message as { params?: { requestId?: RequestId } }).params?.requestId;
      if (cancelled !== undefined) this.openAnswers.get(cancelled)?.cancel();
      // 2026-07-28 over HTTP: closing the answer is the cancellation; there is nothing to post.
      if (this.options.modern) return Promise.resolve();
    }
    const requestId = method !== undefined && 'id' in message ? message.id : undefined;
    let extra: Record<string, string> = {};
    if (this.options.modern && method !== undefined) {
      [message, extra] = modernRequest(message, method, this.options.modern.version);
      if (options?.headers) extra = { ...options.headers, ...extra };
    }
    return new Promise<void>((resolve, reject) => {
      const handler = new PostHandler(this, method === 'notifications/initialized', resolve, reject, requestId);
      if (requestId !== undefined) this.openAnswers.set(requestId, handler);
      this.pool.dispatch(
        {
          path: this.path,
          method: 'POST',
          headers: this.requestHeaders({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra }),
          body: JSON.stringify(message),
          // No abort signal: close() destroys the pool, which fails every request still open.
        },
        handler,
      );
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reopenTimer);
    this.aborter.abort();
    await this.pool.destroy().catch(() => undefined);
    this.onclose?.();
  }

  /** The GET stream of server-initiated messages (tools/list_changed); reopened when it ends. */
  private async openStream(): Promise<void> {
    if (this.closed) return;
    let res: Dispatcher.ResponseData;
    try {
      res = await this.pool.request({
        path: this.path,
        method: 'GET',
        headers: this.requestHeaders({ accept: 'text/event-stream' }),
        signal: this.aborter.signal,
      });
    } catch (err) {
      if (!this.closed) this.onerror?.(err as Error);
      return;
    }
    if (res.statusCode === 405) {
      // The server offers no such stream.
      await res.body.dump();
      return;
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump();
      if (!this.closed) this.onerror?.(new StreamableHTTPError(res.statusCode, `Failed to open SSE stream (HTTP ${res.statusCode})`));
      return;
    }
    await this.readEvents(res.body);
    if (this.closed) return;
    this.reopenTimer = setTimeout(() => void this.openStream(), this.options.reopenMs ?? 1000);
    this.reopenTimer.unref();
  }

  private async readEvents(body: Dispatcher.ResponseData['body'], cursor?: StreamCursor): Promise<void> {
    let held = 0;
    const parser = createParser({
      onEvent: (event) => onEvent(this, event, cursor),
      onRetry: (ms) => {
        if (cursor) cursor.retryMs = ms;
      },
    });
    const decoder = new StringDecoder('utf8');
    try {
      for await (const chunk of body) {
        const text = decoder.write(chunk as Buffer);
        parser.feed(text);
        held = heldAfter(held, (chunk as Buffer).length, text);
        if (held > this.maxMessageBytes) throw new AnswerTooLargeError(this.maxMessageBytes);
      }
    } catch (err) {
      body.destroy();
      // A resumed answer stream cut off is resumed again (its call's timeout bounds it), unless it was too large.
      if (cursor && !(err instanceof AnswerTooLargeError)) return;
      if (!this.closed) this.onerror?.(err as Error);
    }
  }

  /** @internal A POST's answer: the session id it carries. */
  answered(headers: Record<string, string | string[] | undefined>): void {
    const sid = headers['mcp-session-id'];
    if (typeof sid === 'string') this.sessionId = sid;
  }

  /** @internal After notifications/initialized, the server may offer a stream of its own notifications. */
  initialized(): void {
    void this.openStream();
  }

  /**
   * @internal A request's answer stream ended without its answer. With a cursor from the server it
   * is resumed (GET with Last-Event-ID after the server's `retry`) and true is answered; without
   * one there is nothing to resume from.
   */
  resumeIfCut(cursor: StreamCursor, idle = 0): boolean {
    if (cursor.answered || cursor.requestId === undefined || cursor.lastEventId === undefined || this.closed) return false;
    if (idle >= MAX_IDLE_RESUMPTIONS) return false;
    const requestId = cursor.requestId;
    const aborter = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const handle: OpenAnswer = {
      cancel: () => {
        clearTimeout(timer);
        aborter.abort();
      },
    };
    this.openAnswers.set(requestId, handle);
    const resume = async () => {
      const from = cursor.lastEventId;
      let res: Dispatcher.ResponseData;
      try {
        res = await this.pool.request({
          path: this.path,
          method: 'GET',
          headers: this.requestHeaders({ accept: 'text/event-stream', 'last-event-id': from! }),
          signal: aborter.signal,
        });
      } catch (err) {
        if (!aborter.signal.aborted) this.failed(err as Error);
        return;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump();
        if (!aborter.signal.aborted) this.failed(new StreamableHTTPError(res.statusCode, `Failed to resume the answer stream (HTTP ${res.statusCode})`));
        return;
      }
      await this.readEvents(res.body, cursor);
      if (this.openAnswers.get(requestId) === handle) this.openAnswers.delete(requestId);
      if (aborter.signal.aborted || cursor.answered) return;
      this.resumeIfCut(cursor, cursor.lastEventId === from ? idle + 1 : 0);
    };
    timer = setTimeout(() => void resume(), Math.min(cursor.retryMs ?? this.options.resumeMs ?? 1000, MAX_RESUME_WAIT_MS));
    timer.unref();
    return true;
  }

  /** @internal A POST's answer ended (or failed): a cancellation of its request no longer concerns it. */
  closedAnswer(requestId: RequestId | undefined, handler: OpenAnswer): void {
    if (requestId !== undefined && this.openAnswers.get(requestId) === handler) this.openAnswers.delete(requestId);
  }

  /** @internal A failure after the POST was accepted: reported unless the transport is closing. */
  failed(err: Error): void {
    if (!this.closed) this.onerror?.(err);
  }

  /**
   * @internal One JSON body or SSE event's data: one message or a batch. Messages that came on a
   * request's answer stream are delivered with that request's id (`relatedRequestId`), so what an
   * upstream says during a call can be told apart from what it says during another.
   */
  deliverText(text: string, cursor?: StreamCursor): void {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      this.onerror?.(err as Error);
      return;
    }
    for (const m of Array.isArray(data) ? data : [data]) this.deliver(m, cursor);
  }

  private deliver(raw: unknown, cursor: StreamCursor | undefined): void {
    const extra = cursor?.requestId !== undefined ? ({ relatedRequestId: cursor.requestId } as RelatedExtra) : undefined;
    // A plain successful answer (the common case) as the schema would pass it; the rest gets the schema.
    let message: JSONRPCMessage;
    if (isLeanResultResponse(raw)) message = raw as JSONRPCMessage;
    else {
      const parsed = JSONRPCMessageSchema.safeParse(raw);
      if (!parsed.success) {
        this.onerror?.(parsed.error);
        return;
      }
      message = parsed.data;
    }
    if (cursor && 'id' in message && message.id === cursor.requestId && !('method' in message)) cursor.answered = true;
    this.onmessage?.(message, extra);
  }

  private requestHeaders(own: Record<string, string>): Record<string, string> {
    const h: Record<string, string> = { ...this.headers, ...own };
    if (this.sessionId !== undefined) h['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion !== undefined) h['mcp-protocol-version'] = this.protocolVersion;
    return h;
  }
}
