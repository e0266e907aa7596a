// One runtime host for the distribution benchmark: a separate Node process holding `count` SDK
// bundle clients (createBundleClient, as a runtime embeds it), each pulling, verifying and loading
// on its own. It reports on stdout, one JSON line each:
//   {"ready":n}                        once every client holds a bundle
//   {"held":version,"at":ms,"client":i} whenever a client starts holding a new version
// `at` is wall-clock milliseconds (performance.timeOrigin + now) so the parent can compare it with
// the server's publish time. A line "quit" on stdin closes the clients and exits.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createBundleClient } from '../../runtime/client/index.ts';

type Setup = { url: string; tenant: string; token: string; jwks: { keys: never[] }; count: number; name: string };

const setup = JSON.parse(process.env.BENCH_CLIENT_SETUP ?? '') as Setup;
const say = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
const dir = await mkdtemp(join(tmpdir(), 'toolgate-bench-host-'));
const clients = await Promise.all(
  Array.from({ length: setup.count }, (_, i) =>
    createBundleClient({
      url: setup.url,
      tenant: setup.tenant,
      token: setup.token,
      trustedKeys: setup.jwks,
      cacheDir: join(dir, String(i)),
      runtimeId: `${setup.name}-${i}`,
      waitSeconds: 60,
      statusIntervalMs: 0,
      decisionLog: false,
    }),
  ),
);
clients.forEach((c, i) => c.on('update', (b) => say({ held: b.bundle.version, at: performance.timeOrigin + performance.now(), client: i })));
const start = Date.now();
while (!clients.every((c) => c.status().health === 'fresh')) {
  if (Date.now() - start > 60_000) throw new Error(`${setup.name}: the SDK clients did not all become fresh`);
  await new Promise((r) => setTimeout(r, 20));
}
say({ ready: clients.length });
for await (const line of createInterface({ input: process.stdin })) if (line.trim() === 'quit') break;
await Promise.all(clients.map((c) => c.close()));
await rm(dir, { recursive: true, force: true });
process.exit(0);
