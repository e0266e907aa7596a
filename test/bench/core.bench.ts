// Audited edits per second through the HTTP API: one edit (PATCH with If-Match, one audit event,
// synchronous=FULL commit) per request, from several concurrent clients over real sockets.
import { serve } from '@hono/node-server';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { createApp } from '../../server/app.ts';
import { openToolgate } from '../../server/startup.ts';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const TOKEN = 'tg_bench_admin_0123456789abcdef0123456';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
const { deps } = await openToolgate(
  { host: '127.0.0.1', port: 0, dbFile: join(dir, 'db.sqlite'), keysDir: join(dir, 'keys'), webDir: join(dir, 'web'), seed: 'demo', adminToken: TOKEN, logLevel: 'silent' },
  pino({ level: 'silent' }),
);
const app = createApp(deps);
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
await new Promise((r) => server.once('listening', r));
const { port } = server.address() as { port: number };
const base = `http://127.0.0.1:${port}`;
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

// Each client edits its own group and its own tool, so concurrency is real but never a 412.
for (let i = 0; i < CLIENTS; i++) {
  await fetch(`${base}/v1/groups`, { method: 'POST', headers, body: JSON.stringify({ name: `bench-${i}` }) });
  await fetch(`${base}/v1/tools`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ id: `core__bench-${i}`, description: 'bench', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, effect: 'read_only', redaction: { allow: [] } }),
  });
}

// The clients run in a worker thread: on their own event loop (and core), so the figure is the
// server's, not the load generator's.
async function run(kind: 'groups' | 'tools', seconds = SECONDS): Promise<{ edits: number; seconds: number; latencies: number[] }> {
  const worker = new Worker(CLIENT_SOURCE, { eval: true, workerData: { base, headers, kind, clients: CLIENTS, seconds } });
  const [result] = (await once(worker, 'message')) as [{ edits: number; seconds: number; latencies: number[]; error?: string }];
  await worker.terminate();
  if (result.error) throw new Error(result.error);
  return result;
}

const CLIENT_SOURCE = `
const { parentPort, workerData: w } = require('node:worker_threads');
(async () => {
  const latencies = [];
  let edits = 0;
  const deadline = performance.now() + w.seconds * 1000;
  const started = performance.now();
  await Promise.all(Array.from({ length: w.clients }, async (_, i) => {
    const url = w.kind === 'groups' ? w.base + '/v1/groups/bench-' + i : w.base + '/v1/tools/core__bench-' + i;
    let etag = (await fetch(url, { headers: w.headers })).headers.get('etag');
    let n = 0;
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const res = await fetch(url, { method: 'PATCH', headers: { ...w.headers, 'if-match': etag }, body: JSON.stringify({ description: 'edit ' + n++ }) });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error('edit failed: ' + res.status);
      etag = res.headers.get('etag');
      latencies.push(performance.now() - t0);
      edits++;
    }
  }));
  parentPort.postMessage({ edits, seconds: (performance.now() - started) / 1000, latencies });
})().catch((e) => parentPort.postMessage({ error: String(e) }));
`;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
console.log(`audited edits through HTTP, ${CLIENTS} concurrent clients, ${SECONDS}s each, SQLite WAL synchronous=FULL`);
await run('groups', 1); // warm-up: JIT and statement cache, not measured
for (const kind of ['groups', 'tools'] as const) {
  const stats = { ...deps.database.commitStats };
  const r = await run(kind);
  const perCommit = (deps.database.commitStats.changes - stats.changes) / Math.max(1, deps.database.commitStats.commits - stats.commits);
  const rate = r.edits / r.seconds;
  console.log(`  PATCH /v1/${kind}/:id  ${rate.toFixed(0).padStart(6)} edits/s   p50 ${pct(r.latencies, 50).toFixed(2)} ms   p99 ${pct(r.latencies, 99).toFixed(2)} ms   ${perCommit.toFixed(1)} edits per commit   (target ≥ 1000/s: ${(rate / 1000).toFixed(2)}×)`);
}
const verify = await (await fetch(`${base}/v1/audit/verify`, { headers })).json();
console.log(`  audit chain after the run: ${verify.ok ? 'intact' : 'BROKEN'}, ${verify.count} events`);
server.close();
await deps.database.close();
rmSync(dir, { recursive: true, force: true });
