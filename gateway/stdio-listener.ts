import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ResolvedClient } from './config.ts';
import type { Gateway } from './gateway.ts';

export type StdioListener = { closed: Promise<void>; close(): Promise<void> };

/** Serves the one configured client over this process's stdin/stdout; ends when stdin does. */
export async function startStdioListener(gateway: Gateway, client: ResolvedClient): Promise<StdioListener> {
  const session = gateway.openSession(client);
  const transport = new StdioServerTransport();
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  transport.onclose = () => {
    gateway.closeSession(session);
    resolveClosed();
  };
  await session.server!.connect(transport);
  process.stdin.once('end', () => void transport.close());
  return {
    closed,
    async close() {
      await transport.close();
    },
  };
}
