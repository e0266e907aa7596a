import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { callToolResultSchema, isPlainObject } from './lean-messages.ts';

type Pending = { resolve: (result: CallToolResult) => void; reject: (err: unknown) => void; timer: NodeJS.Timeout };

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
  ) {
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const settled = this.settle(message);
      if (settled === 'answered' || !this.admit()) return;
      if (settled === 'other') deliver?.call(transport, message, extra);
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

  call(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CallToolResult> {
    if (this.closed) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    const id = `${ID_PREFIX}${this.next++}`;
    return new Promise<CallToolResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        const reason = 'Request timed out';
        this.transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }).catch(() => undefined);
        reject(new McpError(ErrorCode.RequestTimeout, reason, { timeout: timeoutMs }));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.transport.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }).catch((err) => {
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
    const parsed = callToolResultSchema.safeParse(m.result);
    if (parsed.success) {
      this.results++;
      p.resolve(parsed.data);
    } else p.reject(parsed.error);
    return 'answered';
  }
}
