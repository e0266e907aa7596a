import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { unreadableArgumentsOf } from './call-arguments-text.ts';
import type { ResolvedClient } from './config.ts';
import type { Gateway } from './gateway.ts';
import type { LeanCallParams } from './lean-messages.ts';
import { answerModernMessage, isModernMessage } from './modern-http.ts';
import { StateHandles } from './state-handles.ts';
import { StdioLineTransport } from './stdio-line-transport.ts';

export type StdioListener = { closed: Promise<void>; close(): Promise<void> };

export type StdioListenerOptions = {
  /** Signs and reads 2026-07-28 workflow state handles (default: a key of this listener's own). */
  stateHandles?: StateHandles;
  version?: string;
  /** Where messages come from and answers go (default: this process's stdin and stdout). */
  stdin?: Readable;
  stdout?: Writable;
};

/**
 * Serves the one configured client over this process's stdin/stdout; ends when stdin does. A
 * 2026-07-28 request (one carrying its version in `_meta`) is answered on its own, as over HTTP;
 * everything else goes to the session's SDK server (2025-11-25, initialize first).
 */
export async function startStdioListener(gateway: Gateway, client: ResolvedClient, options: StdioListenerOptions = {}): Promise<StdioListener> {
  const session = gateway.openSession(client);
  const stdin = options.stdin ?? process.stdin;
  const transport = new StdioLineTransport(stdin, options.stdout ?? process.stdout);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  transport.onclose = () => {
    gateway.closeSession(session);
    resolveClosed();
  };
  await session.server!.connect(transport);
  const modern = {
    gateway,
    handles: options.stateHandles ?? new StateHandles(randomBytes(32), ''),
    version: options.version ?? '1',
    instructions: 'Tools are filtered and enforced by Toolgate policy.',
  };
  const toSession = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    const send = (m: Record<string, unknown>) => void transport.send(m as JSONRPCMessage).catch(() => undefined);
    const argumentsText = unreadableArgumentsOf(message);
    if (argumentsText !== undefined && !isModernMessage(message)) {
      // A 2025-11-25 call whose arguments are not I-JSON: refused here, as over HTTP, before the SDK server reads the value.
      const { id, params } = message as unknown as { id: string | number; params: LeanCallParams };
      void gateway.call(session, params, id, argumentsText).then(
        (result) => send({ jsonrpc: '2.0', id, result }),
        () => send({ jsonrpc: '2.0', id, error: { code: -32603, message: 'Internal error' } }),
      );
      return;
    }
    if (!isModernMessage(message)) return toSession?.call(transport, message);
    void answerModernMessage(modern, client, message as Record<string, unknown>, send).catch(() =>
      send({ jsonrpc: '2.0', id: (message as { id: unknown }).id, error: { code: -32603, message: 'Internal error' } }),
    );
  };
  stdin.once('end', () => void transport.close());
  return {
    closed,
    async close() {
      await transport.close();
    },
  };
}
