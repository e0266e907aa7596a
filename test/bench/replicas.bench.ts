// Replicas benchmark (figures only, no assertions), every server a real `toolgate serve` process:
//  1. Audited edits/s through HTTP (PATCH with If-Match, one audit event each, CLIENTS concurrent
//     clients each on its own state): SQLite (synchronous=FULL) beside PostgreSQL with one replica
//     and with two replicas sharing the database (clients split across them). PostgreSQL runs with
//     fsync on, so both engines pay for durability.
//  2. Publish through replica A → 1,000 long-polls spread over A and B (500 each) answered with the
//     new version: p50/p99 from the POST, for each replica's share.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { freePort } from '../support/free-port.ts';
import { startTempPostgres } from '../support/postgres.ts';
import { serveEnv, waitUntilHealthy } from '../support/spawned-server.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const POLLERS = 1000;
const ROUNDS = 3;
const ADMIN = 'tg_bench_replicas_admin_0123456789abcdef';
const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-replicas-'));
const children: ChildProcess[] = [];
const pgCluster = await startTempPostgres({ durable: true });
process.on('exit', () => {
  for (const c of children) if (c.pid && c.exitCode === null) process.kill(-c.pid, 'SIGKILL');
  pgCluster.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function createDatabase(name: string): Promise<string> {
  const client = new pg.Client({ connectionString: pgCluster.url });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return pgCluster.url.replace(/\/postgres$/, `/${name}`);
}

async function replica(db: string, keysDir: string): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli/main.ts', 'serve'], {
    cwd: root,
    detached: true,
    stdio: 'ignore',
    env: serveEnv({ port, dir, adminToken: ADMIN, db, keysDir, seed: 'none' }),
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilHealthy(url, child, 120_000, `toolgate serve on ${db}`);
  return url;
}

async function stopAll(): Promise<void> {
  for (const c of children.splice(0)) {
    if (c.pid && c.exitCode === null) {
      process.kill(-c.pid, 'SIGTERM');
      await once(c, 'exit');
    }
  }
}

async function must(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

// The clients run in a worker thread: their own event loop, so the figure is the servers'.
const CLIENT_SOURCE = `
const { parentPort, workerData: w } = require('node:worker_threads');
(async () => {
  const latencies = [];
  let edits = 0;
  const deadline = performance.now() + w.seconds * 1000;
  const started = performance.now();
  await Promise.all(Array.from({ length: w.clients }, async (_, i) => {
    const url = w.bases[i % w.bases.length] + '/v1/states/bench-' + i;
    let etag = (await fetch(url, { headers: w.headers })).headers.get('etag');
    let n = 0;
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const res = await fetch(url, { method: 'PATCH', headers: { ...w.headers, 'if-match': etag }, body: JSON.stringify({ description: 'edit ' + i + '.' + n++ }) });
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

async function edits(bases: string[], seconds: number): Promise<{ rate: number; p50: number; p99: number }> {
  const worker = new Worker(CLIENT_SOURCE, { eval: true, workerData: { bases, headers, clients: CLIENTS, seconds } });
  const [r] = (await once(worker, 'message')) as [{ edits: number; seconds: number; latencies: number[]; error?: string }];
  await worker.terminate();
  if (r.error) throw new Error(r.error);
  return { rate: r.edits / r.seconds, p50: pct(r.latencies, 50), p99: pct(r.latencies, 99) };
}

async function editSetup(label: string, bases: string[]): Promise<void> {
  for (let i = 0; i < CLIENTS; i++) await must(bases[0], 'POST', '/v1/states', { name: `bench-${i}`, description: 'bench' });
  await edits(bases, 1); // warm-up: JIT, statement caches, pool connections; not measured
  const r = await edits(bases, SECONDS);
  console.log(`  ${label.padEnd(34)} ${r.rate.toFixed(0).padStart(6)} edits/s   p50 ${r.p50.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms`);
}

console.log(`audited edits through HTTP, ${CLIENTS} concurrent clients on their own states, ${SECONDS}s each (every server a separate process)`);
await editSetup('SQLite, one process', [await replica(join(dir, 'sqlite.db'), join(dir, 'keys-sqlite'))]);
await stopAll();
const one = await createDatabase('bench_one');
await editSetup('PostgreSQL, one replica', [await replica(one, join(dir, 'keys-one'))]);
await stopAll();
const two = await createDatabase('bench_two');
const twoKeys = join(dir, 'keys-two');
const a = await replica(two, twoKeys);
const b = await replica(two, twoKeys);
await editSetup('PostgreSQL, two replicas', [a, b]);

// Publish through A → long-polls held on A and on B.
await must(a, 'POST', '/v1/tools', {
  id: 'core__lookup',
  description: 'Looks a record up.',
  inputSchema: { type: 'object', additionalProperties: false, required: ['query'], properties: { query: { type: 'string' } } },
  effect: 'read_only',
  redaction: { allow: ['result'] },
});
await must(a, 'POST', '/v1/tenants', {
  id: 'acme',
  name: 'Acme',
  policy: { roles: { agent: { groups: ['default'], allow: ['core__*'], deny: [], requireApproval: [] } }, bindings: { 'agent:bot': ['agent'] }, profiles: {} },
});
await must(a, 'POST', '/v1/tenants/acme/bundles', { reason: 'bench' });
const runtime = (await must(a, 'POST', '/v1/tokens', { label: 'runtime', role: 'runtime', tenants: ['acme'] })).token as string;

function poll(base: string, agent: http.Agent, etag: string): Promise<{ at: number; status: number; etag: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: url.hostname,
        port: url.port,
        path: '/v1/tenants/acme/bundles/latest?wait=60',
        agent,
        headers: { authorization: `Bearer ${runtime}`, 'if-none-match': etag, 'accept-encoding': 'gzip' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ at: performance.now(), status: res.statusCode ?? 0, etag: String(res.headers.etag ?? '') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

console.log(`\npublish through replica A → ${POLLERS} long-polls, ${POLLERS / 2} held on A and ${POLLERS / 2} on B, ${ROUNDS} rounds`);
const agentA = new http.Agent({ keepAlive: true, maxSockets: POLLERS });
const agentB = new http.Agent({ keepAlive: true, maxSockets: POLLERS });
const onA: number[] = [];
const onB: number[] = [];
const firstOnB: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const head = await fetch(`${a}/v1/tenants/acme/bundles/latest`, { headers: { authorization: `Bearer ${runtime}` } });
  await head.arrayBuffer();
  const etag = head.headers.get('etag')!;
  const heldA = Array.from({ length: POLLERS / 2 }, () => poll(a, agentA, etag));
  const heldB = Array.from({ length: POLLERS / 2 }, () => poll(b, agentB, etag));
  // Time for every poll to connect and be held (the servers are separate processes: nothing to ask).
  await new Promise((r) => setTimeout(r, 3000));
  await must(a, 'POST', '/v1/states', { name: `round-${round}`, description: 'a change to publish' });
  const t0 = performance.now();
  const pub = await must(a, 'POST', '/v1/tenants/acme/bundles', { reason: `round ${round}` });
  const answered = performance.now() - t0;
  const [ra, rb] = await Promise.all([Promise.all(heldA), Promise.all(heldB)]);
  const bad = [...ra, ...rb].filter((r) => r.status !== 200).length;
  const la = ra.map((r) => r.at - t0);
  const lb = rb.map((r) => r.at - t0);
  onA.push(...la);
  onB.push(...lb);
  // The first answer on each replica, from the POST: the wake-up itself (B's through NOTIFY)
  // before 500 answers queue for the CPU. The POST returns after the commit, often after these.
  const firstA = Math.min(...la);
  const firstB = Math.min(...lb);
  firstOnB.push(firstB - firstA);
  console.log(
    `  v${pub.version}: POST answered in ${answered.toFixed(0)} ms · held on A p50 ${pct(la, 50).toFixed(1)} ms p99 ${pct(la, 99).toFixed(1)} ms · held on B p50 ${pct(lb, 50).toFixed(1)} ms p99 ${pct(lb, 99).toFixed(1)} ms (from the POST) · first answer A ${firstA.toFixed(1)} ms, B ${firstB.toFixed(1)} ms${bad ? ` · ${bad} not 200` : ''}`,
  );
}
const all = [...onA, ...onB];
console.log(
  `publish → ${POLLERS} long-polls over two replicas: p50 ${pct(all, 50).toFixed(1)} ms · p99 ${pct(all, 99).toFixed(1)} ms from the POST (A's own p50 ${pct(onA, 50).toFixed(1)} / p99 ${pct(onA, 99).toFixed(1)} ms; B, woken through NOTIFY, p50 ${pct(onB, 50).toFixed(1)} / p99 ${pct(onB, 99).toFixed(1)} ms)`,
);
console.log(`first answer on B minus first answer on A, per round: ${firstOnB.map((x) => `${x.toFixed(1)} ms`).join(', ')} (what waking through NOTIFY adds)`);
agentA.destroy();
agentB.destroy();
await stopAll();
process.exit(0);
