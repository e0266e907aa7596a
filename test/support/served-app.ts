import { serve } from '@hono/node-server';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ADMIN_TOKEN, startTestApp } from './harness.ts';

export type ServedApp = Awaited<ReturnType<typeof startServedApp>>;

/** startTestApp's app, also served over HTTP on 127.0.0.1 (a free port), for CLI commands that speak HTTP. */
export async function startServedApp(opts: { seed?: boolean } = {}) {
  const t = await startTestApp(opts);
  const server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  if (!server.listening) await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    ...t,
    url,
    /** What the CLI reads from the environment to reach this server as the bootstrap admin. */
    env: { TOOLGATE_URL: url, TOOLGATE_TOKEN: ADMIN_TOKEN } as NodeJS.ProcessEnv,
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
    },
  };
}
