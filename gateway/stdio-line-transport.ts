import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { carryCallArguments, noteCallArguments } from './call-arguments-text.ts';

// As the SDK's stdio transport bounds a line that has not ended yet.
const MAX_BUFFER_BYTES = 10 * 1024 * 1024;

/**
 * MCP's stdio transport, server side: one JSON-RPC message per line on stdin, answers on stdout.
 * It reads lines as the SDK's StdioServerTransport does (the same framing, JSON and schema
 * checks, errors to `onerror`), and keeps what the SDK's transport drops: the text of each line,
 * so a tools/call's arguments are judged as I-JSON on their text (see call-arguments-text.ts).
 */
export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private buffer: Buffer | undefined;
  private started = false;

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
  ) {}

  async start(): Promise<void> {
    if (this.started) throw new Error('StdioLineTransport already started');
    this.started = true;
    this.stdin.on('data', this.ondata);
    this.stdin.on('error', this.onstreamerror);
  }

  private readonly ondata = (chunk: Buffer): void => {
    const size = (this.buffer?.length ?? 0) + chunk.length;
    if (size > MAX_BUFFER_BYTES) {
      this.buffer = undefined;
      this.onerror?.(new Error(`a message on stdin is longer than ${MAX_BUFFER_BYTES} bytes`));
      void this.close();
      return;
    }
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      const end = this.buffer?.indexOf(0x0a /* \n */) ?? -1;
      if (end === -1) return;
      const line = this.buffer!.toString('utf8', 0, end).replace(/\r$/, '');
      this.buffer = this.buffer!.subarray(end + 1);
      this.receive(line);
    }
  };

  private readonly onstreamerror = (error: Error): void => {
    this.onerror?.(error);
  };

  private receive(line: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      this.onerror?.(err as Error);
      return;
    }
    noteCallArguments(line, raw);
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.onerror?.(parsed.error);
      return;
    }
    // The schema's parse makes new objects: the note goes with the message handed on.
    carryCallArguments(raw, parsed.data);
    this.onmessage?.(parsed.data);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.ondata);
    this.stdin.off('error', this.onstreamerror);
    // Paused only when nothing else reads stdin.
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.buffer = undefined;
    this.onclose?.();
  }
}
