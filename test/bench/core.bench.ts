// Audited edits per second through the HTTP API: PATCH with If-Match, one audit event per edit,
// from several concurrent clients over real sockets. What it measures is group commit: concurrent
// edits share one synchronous=FULL commit (the "edits per commit" column), so the rate is the
// disk's fsyncs per second times the batch, not one fsync per edit. Then the contended case: every
// client edits the SAME group with If-Match, so most attempts lose the race (412), re-read and retry.
import { serve } from '@hono/node-server';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { createApp } from '../../server/app.ts';
import { openToolgate } from '../../server/startup.ts';
import { toolStore } from '../../server/store/inventory.ts';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const TOKEN = 'tg_bench_admin_0123456789abcdef0123456';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
const { deps } = await openToolgate(
  {
    host: '127.0.0.1',
    port: 0,
    dbFile: join(dir, 'db.sqlite'),
    keysDir: join(dir, 'keys'),
    webDir: join(dir, 'web'),
    seed: 'demo',
    adminToken: TOKEN,
    logLevel: 'silent',
  },
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
    body: JSON.stringify({
      id: `core__bench-${i}`,
      description: 'bench',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      effect: 'read_only',
      redaction: { allow: [] },
    }),
  });
}

// The clients run in a worker thread: on their own event loop (and core), so the figure is the
// server's, not the load generator's.
async function run(
  kind: 'groups' | 'tools' | 'contended',
  seconds = SECONDS,
): Promise<{ edits: number; conflicts: number; seconds: number; latencies: number[] }> {
  const worker = new Worker(CLIENT_SOURCE, { eval: true, workerData: { base, headers, kind, clients: CLIENTS, seconds } });
  const [result] = (await once(worker, 'message')) as [{ edits: number; conflicts: number; seconds: number; latencies: number[]; error?: string }];
  await worker.terminate();
  if (result.error) throw new Error(result.error);
  return result;
}

const CLIENT_SOURCE = `
const { parentPort, workerData: w } = require('node:worker_threads');
(async () => {
  const latencies = [];
  let edits = 0;
  let conflicts = 0;
  const deadline = performance.now() + w.seconds * 1000;
  const started = performance.now();
  await Promise.all(Array.from({ length: w.clients }, async (_, i) => {
    const url = w.kind === 'contended' ? w.base + '/v1/groups/bench-0' : w.kind === 'groups' ? w.base + '/v1/groups/bench-' + i : w.base + '/v1/tools/core__bench-' + i;
    let etag = (await fetch(url, { headers: w.headers })).headers.get('etag');
    let n = 0;
    while (performance.now() < deadline) {
      // Latency of an edit that lands: from its first attempt, through every lost race, to its 200.
      const t0 = performance.now();
      for (;;) {
        const res = await fetch(url, { method: 'PATCH', headers: { ...w.headers, 'if-match': etag }, body: JSON.stringify({ description: 'edit ' + i + '.' + n++ }) });
        await res.arrayBuffer();
        if (res.status === 200) {
          etag = res.headers.get('etag');
          break;
        }
        if (res.status !== 412 || w.kind !== 'contended') throw new Error('edit failed: ' + res.status);
        conflicts++;
        etag = (await fetch(url, { headers: w.headers })).headers.get('etag');
      }
      latencies.push(performance.now() - t0);
      edits++;
    }
  }));
  parentPort.postMessage({ edits, conflicts, seconds: (performance.now() - started) / 1000, latencies });
})().catch((e) => parentPort.postMessage({ error: String(e) }));
`;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
console.log(`audited edits through HTTP, ${CLIENTS} concurrent clients, ${SECONDS}s each, SQLite WAL synchronous=FULL`);
await run('groups', 1); // warm-up: JIT and statement cache, not measured
for (const kind of ['groups', 'tools', 'contended'] as const) {
  const stats = { ...deps.database.commitStats };
  const r = await run(kind);
  const perCommit = (deps.database.commitStats.changes - stats.changes) / Math.max(1, deps.database.commitStats.commits - stats.commits);
  const rate = r.edits / r.seconds;
  const label = kind === 'contended' ? `PATCH one group, ${CLIENTS} clients` : `PATCH /v1/${kind}/:id, own entity`;
  const lost = kind === 'contended' ? `   ${r.conflicts} lost races (412, re-read, retry)` : `   (target ≥ 1000/s: ${(rate / 1000).toFixed(2)}×)`;
  console.log(
    `  ${label.padEnd(34)} ${rate.toFixed(0).padStart(6)} edits/s   p50 ${pct(r.latencies, 50).toFixed(2)} ms   p99 ${pct(r.latencies, 99).toFixed(2)} ms   ${perCommit.toFixed(1)} edits per commit (group commit)${lost}`,
  );
}

// Reads while publishes stream: compiling and signing happen outside the write transaction, so a
// read waits for a publish's short commit at most, not for its compile (2,000 more tools here).
const READ_SOURCE = `
const { parentPort, workerData: w } = require('node:worker_threads');
(async () => {
  const latencies = [];
  const deadline = performance.now() + w.seconds * 1000;
  while (performance.now() < deadline) {
    const t0 = performance.now();
    const res = await fetch(w.base + '/v1/tools', { headers: w.headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error('read failed: ' + res.status);
    latencies.push(performance.now() - t0);
  }
  parentPort.postMessage({ latencies });
})().catch((e) => parentPort.postMessage({ error: String(e) }));
`;
async function readToolsFor(seconds: number): Promise<number[]> {
  const worker = new Worker(READ_SOURCE, { eval: true, workerData: { base, headers, seconds } });
  const [result] = (await once(worker, 'message')) as [{ latencies: number[]; error?: string }];
  await worker.terminate();
  if (result.error) throw new Error(result.error);
  return result.latencies;
}
const EXTRA_TOOLS = Number(process.env.BENCH_PUBLISH_TOOLS ?? 2000);
await deps.database.transaction(async (tx) => {
  const now = new Date().toISOString();
  for (let i = 0; i < EXTRA_TOOLS; i++) {
    const id = `core__pub-${String(i).padStart(4, '0')}`;
    const inputSchema = {
      type: 'object',
      additionalProperties: false,
      properties: { q: { type: 'string', maxLength: 200 }, n: { type: 'integer', minimum: 1 } },
      required: ['q'],
    };
    await toolStore.insert(
      tx,
      id,
      { id, description: `publish bench tool ${i}`, inputSchema, effect: 'read_only', redaction: { allow: ['result'] }, groups: ['default'] },
      now,
    );
  }
});
const publishOnce = async () => {
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/tenants/acme-research/bundles`, { method: 'POST', headers, body: JSON.stringify({ reason: 'bench', refresh: true }) });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`publish failed: ${res.status}`);
  return performance.now() - t0;
};
await publishOnce(); // warm-up
const quiet = await readToolsFor(SECONDS);
const publishTimes: number[] = [];
let streaming = true;
const stream = (async () => {
  while (streaming) publishTimes.push(await publishOnce());
})();
const busy = await readToolsFor(SECONDS);
streaming = false;
await stream;
const line = (label: string, xs: number[]) =>
  `  ${label.padEnd(34)} p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms   p99 ${pct(xs, 99).toFixed(1).padStart(6)} ms   max ${Math.max(...xs)
    .toFixed(1)
    .padStart(6)} ms   (${xs.length} reads)`;
console.log(`\nGET /v1/tools (${EXTRA_TOOLS + 40}-odd tools), one reader, ${SECONDS}s each`);
console.log(line('without publishes', quiet));
console.log(line('during a stream of publishes', busy));
console.log(
  `  publishes meanwhile: ${publishTimes.length}, each p50 ${pct(publishTimes, 50).toFixed(0)} ms, p99 ${pct(publishTimes, 99).toFixed(0)} ms (compile + sign + commit)`,
);

const verify = await (await fetch(`${base}/v1/audit/verify`, { headers })).json();
console.log(`  audit chain after the run: ${verify.ok ? 'intact' : 'BROKEN'}, ${verify.count} events`);
server.close();
await deps.database.close();
rmSync(dir, { recursive: true, force: true });
