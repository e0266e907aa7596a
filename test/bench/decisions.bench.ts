// Decision logs: what recording costs decide(), and how many records per second the server
// ingests. Prints figures; asserts nothing. `npm run bench -- decisions`.
import { gzipSync } from 'node:zlib';
import type { DecisionRecord } from '../../policy-schemas/types.gen.ts';
import { createDecisionLog } from '../../runtime/client/decision-log.ts';
import { createView, decide } from '../../runtime/decide.ts';
import type { ToolCall } from '../../runtime/decide.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { startLiveServer } from '../distribution/live-server.ts';
import { makeBundle } from '../distribution/signed-bundles.ts';

const loaded = loadBundle(makeBundle({ tenant: 'acme', version: 1, tools: 100 }));
const view = createView(loaded, { subject: 'agent:support-bot', facts: { hostSession: 'ready' } });
const calls: ToolCall[] = Array.from({ length: 64 }, (_, i) => ({
  toolCallId: `call_${i}`,
  name: `core__tool-${String(1 + (i % 90)).padStart(4, '0')}`,
  arguments: { query: 'what is the weather' },
}));

// A log whose shipments succeed at once, so the ring drains between rounds as it would in a process
// whose server is up; nothing leaves the machine.
let shipped = 0;
const log = createDecisionLog({
  url: 'http://127.0.0.1:9',
  tenant: 'acme',
  token: 'bench',
  runtimeId: 'bench',
  flushIntervalMs: 1000,
  fetch: (async () => {
    shipped++;
    return new Response(null, { status: 202 });
  }) as typeof fetch,
});

const ROUND = 5_000;
function round(logging: boolean): number {
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ROUND; i++) {
    const call = calls[i & 63];
    const d = decide(view, call);
    if (logging) log.recordDecision(view, call.name, d);
    sink += d.decision.length;
  }
  const ns = Number(process.hrtime.bigint() - t0) / ROUND;
  if (sink === 0) console.log('unreachable');
  return ns;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function decideOverhead(): Promise<void> {
  // Warm both paths up (JIT), then alternate rounds so that both see the same machine.
  for (let i = 0; i < 40; i++) {
    round(false);
    round(true);
    await new Promise((r) => setImmediate(r));
  }
  const off: number[] = [];
  const on: number[] = [];
  const overhead: number[] = [];
  for (let i = 0; i < 200; i++) {
    const a = round(false);
    const b = round(true);
    off.push(a);
    on.push(b);
    overhead.push(b - a);
    // Let the shipper run between rounds (as the event loop would between tool calls).
    await new Promise((r) => setImmediate(r));
  }
  await log.flush();
  console.log(`decide() logging off: median ${median(off).toFixed(1)} ns/call`);
  console.log(`decide() logging on:  median ${median(on).toFixed(1)} ns/call`);
  console.log(`recording overhead:   median ${median(overhead).toFixed(1)} ns/call (paired rounds of ${ROUND}; target < 200 ns)`);
  // On a busy machine the medians carry other processes' time; the best rounds carry the least.
  const best = (xs: number[]) => Math.min(...xs);
  console.log(`best rounds:          off ${best(off).toFixed(1)} ns, on ${best(on).toFixed(1)} ns, difference ${(best(on) - best(off)).toFixed(1)} ns/call`);
  console.log(`(shipments made meanwhile: ${shipped}, records dropped: ${log.stats().dropped})`);
  await log.close();
}

async function ingestion(): Promise<void> {
  const srv = await startLiveServer();
  try {
    await srv.createTenant('acme');
    const token = await srv.tokenFor('runtime', ['acme']);
    const PER_BATCH = 1_000;
    const records: DecisionRecord[] = Array.from({ length: PER_BATCH }, (_, i) => ({
      at: new Date(Date.now() - 60_000 + i).toISOString(),
      toolCallId: `call-${i}`,
      subject: `agent:bot-${i % 20}`,
      groups: ['default'],
      state: 'undefined',
      facts: { hostSession: 'ready' },
      tool: `core__tool-${String(i % 90).padStart(4, '0')}`,
      decision: i % 7 === 0 ? 'deny' : 'allow',
      ...(i % 7 === 0 ? { errorCode: 'policy_denied', reason: 'not_allowed' } : {}),
      bundleVersion: 1,
    }));
    const body = gzipSync(JSON.stringify({ runtimeId: 'bench', dropped: 0, records }));
    const latencies: number[] = [];
    const post = async () => {
      const started = performance.now();
      const res = await fetch(`${srv.url}/v1/tenants/acme/decisions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body,
      });
      await res.arrayBuffer();
      if (res.status !== 202) throw new Error(`ingest answered ${res.status}`);
      latencies.push(performance.now() - started);
    };
    for (let i = 0; i < 5; i++) await post();
    for (const clients of [1, 4]) {
      latencies.length = 0;
      let batches = 0;
      const until = performance.now() + 5_000;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (performance.now() < until) {
            await post();
            batches++;
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      console.log(
        `ingest, ${clients} runtime(s) posting gzip batches of ${PER_BATCH} (${(body.length / 1024).toFixed(1)} KiB): ${Math.round((batches * PER_BATCH) / seconds).toLocaleString('en-US')} records/s (${batches} batches in ${seconds.toFixed(1)} s)`,
      );
      const sorted = [...latencies].sort((a, b) => a - b);
      console.log(
        `  batch latency: best ${sorted[0].toFixed(1)} ms, median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms (the best is what a quiet machine approaches)`,
      );
    }
  } finally {
    await srv.dispose();
  }
}

await decideOverhead();
await ingestion();
