import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { refusedCallRequest } from './call-arguments-text.ts';
import { type LeanRequest, isPlainObject, leanRequest } from './lean-messages.ts';

/**
 * Answers a request without the SDK's protocol object: resolves with the serialized `result` of
 * the JSON-RPC answer (or rejects as a request handler throws), or returns undefined to let the
 * SDK handle the request as usual.
 */
export type LeanDispatch = (request: LeanRequest) => Promise<string | Buffer> | undefined;

export type HttpSessionTransportOptions = {
  sessionId: string;
  /** Answer requests with one JSON body (true) or with an SSE stream per POST (false). */
  jsonResponse: boolean;
  /** Called once the initialize request has been accepted, before it is handled. */
  onsessioninitialized?: (sessionId: string) => void;
  /** A comment line on idle SSE streams this often, so proxies keep them open (default 15 s). */
  keepAliveMs?: number;
  /** The hot-path requests (tools/call, tools/list) answered directly; the SDK server handles the rest. */
  dispatch?: LeanDispatch;
};

/** One serialized JSON-RPC message, in pieces (a cached answer body stays one Buffer). */
type Serialized = Array<string | Buffer>;

/** The open answer of one POST carrying requests: its answers are collected (JSON) or streamed (SSE). */
type PostStream = { res: ServerResponse; ids: RequestId[]; answers: Map<RequestId, Serialized>; sse: boolean; keepAlive: NodeJS.Timeout | undefined };

// As the SDK's own server transport limits a batch.
const MAX_BATCH_SIZE = 100;
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' };

/**
 * The server side of MCP's streamable HTTP transport for one session, written against Node's
 * http objects. The SDK's StreamableHTTPServerTransport converts every request and answer to
 * and from web-standard Request/Response objects and streams and classifies each message with
 * several schema parses; on the gateway's hot path (one tools/call per POST) that costs more
 * than the policy work, so this transport does the same protocol directly: one JSON parse (by
 * the listener), one JSON-RPC validation, one write per answer. With a `dispatch`, plain
 * tools/call and tools/list requests skip the SDK server too (see lean-messages.ts). Stateful
 * sessions only, no resumability (no event store), as the gateway uses them.
 */
export class HttpSessionTransport implements Transport {
  readonly sessionId: string;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private started = false;
  private initialized = false;
  private closed = false;
  private readonly byRequest = new Map<RequestId, PostStream>();
  /** Requests the dispatcher is answering: true once the client cancelled one. */
  private readonly dispatched = new Map<RequestId, boolean>();
  private standalone: { res: ServerResponse; keepAlive: NodeJS.Timeout } | undefined;
  private readonly keepAliveMs: number;

  constructor(private readonly options: HttpSessionTransportOptions) {
    this.sessionId = options.sessionId;
    this.keepAliveMs = options.keepAliveMs ?? 15_000;
  }

  /** Whether a request of this session is being answered now (such a session is not idle). */
  busy(): boolean {
    return this.byRequest.size > 0 || this.dispatched.size > 0;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('Transport already started');
    this.started = true;
  }

  /** Serves one HTTP request of this session; `body` is the already parsed JSON body of a POST. */
  handleRequest(req: IncomingMessage, res: ServerResponse, body?: unknown): void {
    if (this.closed) return sendError(res, 404, -32001, 'Session not found');
    if (req.method === 'POST') return this.post(req, res, body);
    if (req.method === 'GET') return this.get(req, res);
    if (req.method === 'DELETE') return this.delete(req, res);
    sendError(res, 405, -32000, 'Method not allowed.', { allow: 'GET, POST, DELETE' });
  }

  private post(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    const accept = req.headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return sendError(res, 406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'application/json') return sendError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) {
      return sendError(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    }
    const raw = Array.isArray(body) ? body : [body];
    const messages: JSONRPCMessage[] = [];
    // Requests the dispatcher may answer, by position; every other message gets the SDK's schema.
    const lean: Array<LeanRequest | null> = [];
    for (const m of raw) {
      // A tools/call whose arguments are not I-JSON goes to the dispatcher too, to be refused whatever else it holds.
      const plain = this.options.dispatch ? (leanRequest(m) ?? refusedCallRequest(m)) : null;
      if (plain) {
        messages.push(plain);
        lean.push(plain);
        continue;
      }
      const parsed = JSONRPCMessageSchema.safeParse(m);
      if (!parsed.success) return sendError(res, 400, -32700, 'Parse error: Invalid JSON-RPC message');
      messages.push(parsed.data);
      lean.push(null);
    }
    const initializing = messages.some((m) => 'method' in m && m.method === 'initialize');
    if (initializing) {
      if (this.initialized) return sendError(res, 400, -32600, 'Invalid Request: Server already initialized');
      if (messages.length > 1) return sendError(res, 400, -32600, 'Invalid Request: Only one initialization request is allowed');
      this.initialized = true;
      this.options.onsessioninitialized?.(this.sessionId);
    } else {
      if (this.refused(req, res)) return;
    }

    const extra: MessageExtraInfo = { requestInfo: { headers: req.headers } };
    const ids: RequestId[] = [];
    for (const m of messages) if (isRequest(m)) ids.push(m.id);
    if (ids.length === 0) {
      // Only notifications and responses: accepted, nothing to answer.
      res.writeHead(202).end();
      for (const m of messages) this.receive(m, null, extra);
      return;
    }
    const stream: PostStream = { res, ids, answers: new Map(), sse: !this.options.jsonResponse, keepAlive: undefined };
    for (const id of ids) this.byRequest.set(id, stream);
    if (stream.sse) {
      // Headers go out with the first event (one write), unless a keep-alive comes first.
      res.writeHead(200, { ...SSE_HEADERS, 'mcp-session-id': this.sessionId });
      stream.keepAlive = setInterval(() => res.write(': keepalive\n\n'), this.keepAliveMs);
      stream.keepAlive.unref();
    }
    // A client that goes away stops waiting: its answers are dropped when they come.
    res.once('close', () => this.release(stream));
    for (let i = 0; i < messages.length; i++) this.receive(messages[i], lean[i], extra);
  }

  /** Hands a message to the dispatcher when it takes it, else to the SDK. */
  private receive(m: JSONRPCMessage, plain: LeanRequest | null, extra: MessageExtraInfo): void {
    const answer = plain ? this.options.dispatch?.(plain) : undefined;
    if (!answer) {
      this.noteCancellation(m);
      this.onmessage?.(m, extra);
      return;
    }
    const id = plain!.id;
    this.dispatched.set(id, false);
    answer.then(
      (result) => {
        if (this.dispatched.get(id) === false) this.answer(id, ['{"jsonrpc":"2.0","id":', JSON.stringify(id), ',"result":', result, '}']);
        this.dispatched.delete(id);
      },
      (err: { code?: unknown; message?: unknown; data?: unknown }) => {
        // As the SDK answers for a request handler that threw.
        const error: Record<string, unknown> = {
          code: Number.isSafeInteger(err?.code) ? err.code : ErrorCode.InternalError,
          message: typeof err?.message === 'string' ? err.message : 'Internal error',
        };
        if (err?.data !== undefined) error.data = err.data;
        if (this.dispatched.get(id) === false) this.answer(id, [JSON.stringify({ jsonrpc: '2.0', id, error })]);
        this.dispatched.delete(id);
      },
    );
  }

  /** A request the client cancelled is not answered, as the SDK does for the requests it handles. */
  private noteCancellation(m: JSONRPCMessage): void {
    if (!('method' in m) || m.method !== 'notifications/cancelled' || 'id' in m) return;
    const id = isPlainObject(m.params) ? (m.params.requestId as RequestId | undefined) : undefined;
    if (id !== undefined && this.dispatched.has(id)) this.dispatched.set(id, true);
  }

  private get(req: IncomingMessage, res: ServerResponse): void {
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      return sendError(res, 406, -32000, 'Not Acceptable: Client must accept text/event-stream');
    }
    if (this.refused(req, res)) return;
    if (this.standalone) return sendError(res, 409, -32000, 'Conflict: Only one SSE stream is allowed per session');
    res.writeHead(200, { ...SSE_HEADERS, 'mcp-session-id': this.sessionId });
    res.flushHeaders();
    const keepAlive = setInterval(() => res.write(': keepalive\n\n'), this.keepAliveMs);
    keepAlive.unref();
    const standalone = { res, keepAlive };
    this.standalone = standalone;
    res.once('close', () => {
      clearInterval(keepAlive);
      if (this.standalone === standalone) this.standalone = undefined;
    });
  }

  private delete(req: IncomingMessage, res: ServerResponse): void {
    if (this.refused(req, res)) return;
    res.writeHead(200).end();
    void this.close();
  }

  /** Session and protocol-version checks every request after initialize must pass. */
  /** Answers and returns true when the request fails them. */
  private refused(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.initialized) return refuse(res, 400, -32000, 'Bad Request: Server not initialized');
    const sid = req.headers['mcp-session-id'];
    if (sid === undefined) return refuse(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    if (sid !== this.sessionId) return refuse(res, 404, -32001, 'Session not found');
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      const supported = SUPPORTED_PROTOCOL_VERSIONS.join(', ');
      return refuse(res, 400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${supported})`);
    }
    return false;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const answer = isResponse(message);
    const requestId = answer ? (message as { id: RequestId }).id : options?.relatedRequestId;
    if (requestId === undefined) {
      if (answer) throw new Error('Cannot send a response on a standalone SSE stream unless resuming a previous client request');
      // Without an open GET stream there is nowhere to send it (no event store to replay from).
      if (this.standalone) this.standalone.res.write(sseEvent(message));
      return;
    }
    if (!answer) {
      const stream = this.byRequest.get(requestId);
      // The client left, or the session closed: nobody is waiting for this any more.
      if (!stream || !this.toEvents(stream)) return;
      stream.res.write(sseEvent(message));
      return;
    }
    this.answer(requestId, [JSON.stringify(message)]);
  }

  /**
   * A POST answered with JSON turns into an SSE stream when something about its requests must
   * reach the client before their answers (a call's progress or log messages, a question to the
   * client): a plain call keeps its one JSON body, a call with news gets them as they come. The
   * answers collected so far go out first, as events. False when the answer has already gone.
   */
  private toEvents(stream: PostStream): boolean {
    if (stream.sse) return true;
    if (stream.res.headersSent) return false;
    stream.sse = true;
    stream.res.writeHead(200, { ...SSE_HEADERS, 'mcp-session-id': this.sessionId });
    for (const done of stream.answers.values()) stream.res.write(joined(['event: message\ndata: ', ...done, '\n\n']));
    stream.keepAlive = setInterval(() => stream.res.write(': keepalive\n\n'), this.keepAliveMs);
    stream.keepAlive.unref();
    return true;
  }

  /** Sends the answer to a request on the stream of the POST that carried it. */
  private answer(requestId: RequestId, message: Serialized): void {
    const stream = this.byRequest.get(requestId);
    // The client left, or the session closed: nobody is waiting for this any more.
    if (!stream) return;
    stream.answers.set(requestId, message);
    const last = stream.answers.size === stream.ids.length;
    if (stream.sse) {
      // The last answer and the end of the stream leave in one write.
      const event = joined(['event: message\ndata: ', ...message, '\n\n']);
      if (last) stream.res.end(event);
      else stream.res.write(event);
    }
    if (!last) return;
    this.release(stream);
    if (stream.sse) return;
    const pieces: Serialized = [];
    if (stream.ids.length === 1) pieces.push(...message);
    else
      stream.ids.forEach((id, i) => {
        pieces.push(i === 0 ? '[' : ',', ...stream.answers.get(id)!);
        if (i === stream.ids.length - 1) pieces.push(']');
      });
    const body = joined(pieces);
    stream.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'mcp-session-id': this.sessionId });
    stream.res.end(body);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const open = new Set(this.byRequest.values());
    this.byRequest.clear();
    for (const s of open) {
      clearInterval(s.keepAlive);
      if (s.res.headersSent) s.res.end();
      else sendError(s.res, 404, -32001, 'Session not found');
    }
    if (this.standalone) {
      clearInterval(this.standalone.keepAlive);
      this.standalone.res.end();
      this.standalone = undefined;
    }
    this.onclose?.();
  }

  private release(stream: PostStream): void {
    clearInterval(stream.keepAlive);
    for (const id of stream.ids) if (this.byRequest.get(id) === stream) this.byRequest.delete(id);
  }
}

function isRequest(m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId; method: string } {
  return 'method' in m && 'id' in m;
}

function isResponse(m: JSONRPCMessage): boolean {
  return 'id' in m && ('result' in m || 'error' in m) && !('method' in m);
}

/** One string when every piece is a string (the common small answer), else one Buffer. */
function joined(pieces: Serialized): string | Buffer {
  if (pieces.every((p) => typeof p === 'string')) return pieces.join('');
  return Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}

function sseEvent(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

function refuse(res: ServerResponse, status: number, code: number, message: string): true {
  sendError(res, status, code, message);
  return true;
}

function sendError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  const text = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
