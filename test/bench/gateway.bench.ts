// Gateway benchmark (figures only, no assertions), same run, same machine:
//  1. Added latency per tools/call: an MCP SDK client calling a stdio upstream directly, against
//     the same client calling it through `toolgate gateway` (a separate process) over HTTP.
//  2. 200 concurrent sessions × 50 calls each through the gateway: errors, throughput, latency.
//     Then a publish reaching those 200 sessions as tools/list_changed.
//  3. tools/list with 2,000 visible tools: as the client sees it (HTTP round trip), and the
//     gateway's own work per list in process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { startLiveServer } from '../distribution/live-server.ts';
import { jwksOf, makeKey, revisionOf, signBytes } from '../distribution/signed-bundles.ts';
import type { UpstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { startGatewayProcess } from '../gateway/gateway-process.ts';
import { MCP_BUNDLE_SUBJECT, mcpBundle } from '../gateway/mcp-bundle.ts';
import { freePort } from '../support/free-port.ts';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, '..', 'fixtures', 'mcp', 'gateway-upstream.ts');
const TOOLS = 2000;
const SEQUENTIAL_CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const SESSIONS = 200;
const CALLS_PER_SESSION = 50;
const PUBLISH_ROUNDS = 5;
const KEY = 'bench-client-key-0123456789';
const SUBJECT = MCP_BUNDLE_SUBJECT;

const dir = mkdtempSync(join(tmpdir(), 'toolgate-gw-bench-'));
const srv = await startLiveServer();
let gatewayStop: (() => Promise<void>) | undefined;
try {
  await run();
} finally {
  await gatewayStop?.();
  await srv.dispose();
  rmSync(dir, { recursive: true, force: true });
}

async function run(): Promise<void> {
  // 2,000 upstream tools and a bundle pinning each of them, all visible to the subject.
  const inputSchema = { type: 'object', properties: { text: { type: 'string', maxLength: 100 } }, required: ['text'], additionalProperties: false };
  const state: UpstreamFixtureState = { tools: [] };
  for (let i = 0; i < TOOLS; i++)
    state.tools.push({ name: `tool-${String(i).padStart(4, '0')}`, description: `Benchmark tool ${i}: echoes the text back.`, inputSchema });
  const stateFile = join(dir, 'state.json');
  writeFileSync(stateFile, JSON.stringify(state));
  const upstream = { kind: 'stdio' as const, command: process.execPath, args: ['--import', 'tsx', FIXTURE, stateFile, '-'] };

  await srv.createTenant('bench');
  const key = await makeKey('bench-key');
  const bundle = mcpBundle('bench', 1, 'bench', state);
  const text = canonicalJson(bundle);
  await srv.place('bench', 1, { text, signature: await signBytes(text, key), revision: bundle.revision });
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify(jwksOf(key)));
  const runtimeToken = await srv.tokenFor('runtime', ['bench']);
  const port = await freePort();
  writeFileSync(
    join(dir, 'gateway.json'),
    JSON.stringify({
      control: { url: srv.url, tenant: 'bench', token: runtimeToken, jwksFile: 'jwks.json', cacheDir: 'cache' },
      listen: { http: { port } },
      clients: [{ name: 'bench', key: KEY, subject: SUBJECT }],
      upstreams: { bench: upstream },
    }),
  );
  const gw = await startGatewayProcess(
    join(dir, 'gateway.json'),
    port,
    { TOOLGATE_LOG_LEVEL: 'warn' },
    process.env.BENCH_GATEWAY_NODE_ARGS?.split(' ').filter(Boolean),
  );
  gatewayStop = () => gw.stop();
  for (let i = 0; i < 600; i++) {
    const h = await gw.health();
    if (h.status === 'ok') break;
    await new Promise((r) => setTimeout(r, 100));
  }

  const direct = new Client({ name: 'bench-direct', version: '1' });
  await direct.connect(new StdioClientTransport({ command: upstream.command, args: upstream.args, stderr: 'ignore' }));
  const via = await httpClient(gw.url);

  // 1. Added latency per call, interleaved so both paths see the same machine state.
  const args = { text: 'hello' };
  for (let i = 0; i < 300; i++) {
    await direct.callTool({ name: 'tool-0001', arguments: args });
    await via.callTool({ name: 'mcp__bench__tool-0001', arguments: args });
  }
  const d: number[] = [];
  const g: number[] = [];
  for (let i = 0; i < SEQUENTIAL_CALLS; i++) {
    let t = performance.now();
    await direct.callTool({ name: 'tool-0001', arguments: args });
    d.push(performance.now() - t);
    t = performance.now();
    const r = await via.callTool({ name: 'mcp__bench__tool-0001', arguments: args });
    g.push(performance.now() - t);
    if (r.isError) throw new Error(`gateway call failed: ${JSON.stringify(r)}`);
  }
  const [dp50, dp99, gp50, gp99] = [pct(d, 50), pct(d, 99), pct(g, 50), pct(g, 99)];
  console.log(`tools/call, ${SEQUENTIAL_CALLS} sequential calls each path (stdio upstream; gateway over streamable HTTP):`);
  console.log(`  direct to upstream   p50 ${f(dp50)} ms  p99 ${f(dp99)} ms`);
  console.log(`  through the gateway  p50 ${f(gp50)} ms  p99 ${f(gp99)} ms`);
  console.log(`  added by the gateway p50 ${f(gp50 - dp50)} ms (target ≤ 1 ms)  p99 ${f(gp99 - dp99)} ms (target ≤ 3 ms)`);

  // 2. 200 sessions × 50 calls, all at once.
  const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => httpClient(gw.url)));
  let errors = 0;
  const lat: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    sessions.map(async (c, s) => {
      for (let i = 0; i < CALLS_PER_SESSION; i++) {
        const t = performance.now();
        try {
          const r = await c.callTool({ name: `mcp__bench__tool-${String((s * CALLS_PER_SESSION + i) % TOOLS).padStart(4, '0')}`, arguments: args });
          if (r.isError) errors++;
        } catch {
          errors++;
        }
        lat.push(performance.now() - t);
      }
    }),
  );
  const wall = performance.now() - t0;
  console.log(
    `\n${SESSIONS} concurrent sessions × ${CALLS_PER_SESSION} calls: ${errors} errors, ${Math.round((SESSIONS * CALLS_PER_SESSION) / (wall / 1000))} calls/s, p50 ${f(pct(lat, 50))} ms, p99 ${f(pct(lat, 99))} ms`,
  );

  // A publish reaching the same 200 connected sessions as tools/list_changed.
  const arrivals: number[] = [];
  for (let round = 0; round < PUBLISH_ROUNDS; round++) {
    const next = mcpBundle('bench', 2 + round, 'bench', state);
    next.policy.bindings[`agent:round-${round}`] = ['analyst'];
    next.revision = revisionOf(next);
    const nextText = canonicalJson(next);
    const signature = await signBytes(nextText, key);
    const waits = sessions.map(
      (c) => new Promise<number>((resolve) => c.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve(performance.now()))),
    );
    const t = performance.now();
    await srv.place('bench', 2 + round, { text: nextText, signature, revision: next.revision });
    for (const at of await Promise.all(waits)) arrivals.push(at - t);
  }
  console.log(
    `publish → tools/list_changed at ${SESSIONS} connected sessions (${PUBLISH_ROUNDS} rounds): p50 ${f(pct(arrivals, 50))} ms, p99 ${f(pct(arrivals, 99))} ms (target p99 < 1 s)`,
  );
  await Promise.all(sessions.map((c) => c.close()));

  // 3. tools/list with 2,000 visible tools: the SDK client (which validates every tool with zod)
  // and a bare HTTP request (the gateway's answer as it leaves the process).
  const raw: number[] = [];
  const sid = (via.transport as StreamableHTTPClientTransport).sessionId!;
  for (let i = 0; i < 60; i++) {
    const t = performance.now();
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' }),
    });
    const body = (await res.json()) as { result: { tools: unknown[] } };
    if (i >= 10) raw.push(performance.now() - t);
    if (body.result.tools.length !== TOOLS) throw new Error('tools/list did not list every tool');
  }
  console.log(`\ntools/list with ${TOOLS} visible tools, bare HTTP round trip: p50 ${f(pct(raw, 50))} ms, p99 ${f(pct(raw, 99))} ms (target < 20 ms)`);
  const lists: number[] = [];
  let count = 0;
  for (let i = 0; i < 60; i++) {
    const t = performance.now();
    const r = await via.listTools();
    if (i >= 10) lists.push(performance.now() - t);
    count = r.tools.length;
  }
  console.log(`tools/list with ${count} visible tools, MCP SDK client round trip: p50 ${f(pct(lists, 50))} ms, p99 ${f(pct(lists, 99))} ms (target < 20 ms)`);
  await listInProcess(bundle, state);

  await via.close();
  await direct.close();
}

/** The gateway's own work for one tools/list (evaluate, pin checks, tool objects), without HTTP. */
async function listInProcess(bundle: Bundle, state: UpstreamFixtureState): Promise<void> {
  const { Gateway } = await import('../../gateway/gateway.ts');
  const { createGatewayMetrics } = await import('../../gateway/metrics.ts');
  const loaded = loadBundle(bundle);
  const hashes = new Map(state.tools.map((t) => [t.name, definitionHash(t)]));
  const answer = { ok: true, result: { content: [{ type: 'text', text: 'echo: hello' }] } };
  const upstream = { isReady: () => true, definitionHashOf: (n: string) => hashes.get(n), call: async () => answer, on() {}, off() {} };
  const policy = { current: () => ({ ok: true, current: { loaded, bundle } }), on() {}, off() {} };
  const gateway = new Gateway({
    config: { timeouts: { callMs: 30000, approvalMs: 60000 } },
    policy: policy as never,
    upstreams: new Map([['bench', upstream as never]]),
    sink: { record() {} },
    metrics: createGatewayMetrics(),
  });
  const opened = performance.now();
  const session = gateway.openSession({ name: 'bench', subject: SUBJECT, keyDigest: null, request: { subject: SUBJECT }, initialState: 'undefined' });
  const first = performance.now() - opened;
  const times: number[] = [];
  let n = 0;
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    n = gateway.list(session).tools.length;
    times.push(performance.now() - t);
  }
  console.log(
    `tools/list with ${n} visible tools, the gateway's own work in process: first (opening a session computes it) ${f(first)} ms, then (answer cached until the bundle, the session's request or an upstream changes) p50 ${f(pct(times, 50))} ms, p99 ${f(pct(times, 99))} ms`,
  );
  const calls: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const t = performance.now();
    const r = await gateway.call(session, { name: 'mcp__bench__tool-0001', arguments: { text: 'hello' } });
    if (i >= 500) calls.push(performance.now() - t);
    if (r.isError) throw new Error(JSON.stringify(r));
  }
  console.log(
    `tools/call, the gateway's own work in process (decide, pin check, budgets, redaction, record, metrics): p50 ${f(pct(calls, 50))} ms, p99 ${f(pct(calls, 99))} ms`,
  );
  gateway.close();
}

async function httpClient(url: string): Promise<Client> {
  const c = new Client({ name: 'bench-via-gateway', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }));
  return c;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

function f(ms: number): string {
  return ms.toFixed(3);
}
