// Gateway benchmark (figures only, no assertions), same run, same machine:
//  1. Added latency per tools/call: the same MCP SDK client calling the same upstream with the
//     same arguments directly and through `toolgate gateway` (a separate process), interleaved,
//     on warm connections: (a) both over streamable HTTP, to one HTTP upstream process, and beside
//     it the floor: the same through a bare pass-through proxy process; (b) both
//     over stdio (the gateway listening on stdio); (c) the previous round's mixed figure: stdio
//     straight to the upstream against HTTP to the gateway. BENCH_PARTS picks parts
//     (http,stdio,mixed,sessions,list); BENCH_CALLS the calls per path. The measuring client runs
//     in a process of its own (mcp-client-process.ts), away from the control plane this process hosts.
//  2. 200 concurrent sessions × 50 calls each through the gateway: errors, throughput, latency.
//     Then a publish reaching those 200 sessions as tools/list_changed.
//  3. tools/list with 2,000 visible tools: as the client sees it (HTTP round trip), and the
//     gateway's own work per list in process.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { startLiveServer } from '../distribution/live-server.ts';
import { jwksOf, makeKey, revisionOf, signBytes } from '../distribution/signed-bundles.ts';
import type { TestKey } from '../distribution/signed-bundles.ts';
import type { UpstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { GATEWAY_BUILT, GATEWAY_FROM_SOURCE, startGatewayProcess } from '../gateway/gateway-process.ts';
import { ensureServerBuilt } from '../build/ensure-built.ts';
import { MCP_BUNDLE_SUBJECT, mcpBundle } from '../gateway/mcp-bundle.ts';
import { freePort } from '../support/free-port.ts';
import { runClientJob } from './client-process.ts';
import type { ClientJob, Endpoint, ListResult, PairResult } from './mcp-client-process.ts';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, '..', 'fixtures', 'mcp', 'gateway-upstream.ts');
const ROOT = join(here, '..', '..');
const TOOLS = 2000;
const SEQUENTIAL_CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const SESSIONS = 200;
const CALLS_PER_SESSION = 50;
const PUBLISH_ROUNDS = 5;
const LIST_SAMPLES = 200;
/** The gateway between client and upstream, its tool name for the call, and the targets beside its figures. */
const GATEWAY_HOP = { name: 'gateway', toolName: 'mcp__bench__tool-0001', targets: true };
const KEY = 'bench-client-key-0123456789';
const SUBJECT = MCP_BUNDLE_SUBJECT;

// The SDK's streamable HTTP client passes one AbortSignal to every fetch, and fetch leaves a
// listener on it per request until garbage collection: past 1,500 Node prints a warning on every
// call. Printing it would load the measuring process (not the gateway), so it is not printed.
process.removeAllListeners('warning');

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
  if (process.env.BENCH_GATEWAY_FROM_SOURCE !== '1') await ensureServerBuilt();
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
  const control = { url: srv.url, tenant: 'bench', token: runtimeToken, jwksFile: 'jwks.json' };
  const clients = [{ name: 'bench', key: KEY, subject: SUBJECT }];
  const args = { text: 'hello' };
  const parts = (process.env.BENCH_PARTS ?? 'http,stdio,mixed,sessions,list').split(',');

  console.log(
    `tools/call added latency: ${SEQUENTIAL_CALLS} calls per path after 300 warm-up calls, the direct and gateway calls interleaved one by one; added = p(gateway) − p(direct). Load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  // 1a. Same client (MCP SDK, streamable HTTP), same upstream process (an MCP SDK server over
  //     streamable HTTP): straight to the upstream, or through an HTTP gateway in front of it.
  if (parts.includes('http')) {
    const upPort = await freePort();
    const up = await startHttpUpstream(stateFile, upPort);
    try {
      const gwPort = await freePort();
      writeFileSync(
        join(dir, 'gateway-http.json'),
        JSON.stringify({
          control: { ...control, cacheDir: 'cache-http' },
          listen: { http: { port: gwPort } },
          clients,
          upstreams: { bench: { kind: 'http', url: `http://127.0.0.1:${upPort}/mcp` } },
        }),
      );
      const gw = await startReadyGateway(join(dir, 'gateway-http.json'), gwPort);
      try {
        const direct = { url: `http://127.0.0.1:${upPort}/mcp` };
        await pair('HTTP client, HTTP upstream', direct, { url: gw.url, key: KEY }, args, gw.child.pid);
        // The floor: what one more Node HTTP hop costs here without any of the gateway's work.
        const proxy = await startPassThroughProxy(`http://127.0.0.1:${upPort}/mcp`);
        try {
          const near = { url: `http://127.0.0.1:${upPort}/mcp` };
          await pair(
            'HTTP client, bare pass-through proxy (node:http and undici, no policy, no parsing), HTTP upstream',
            near,
            { url: proxy.url },
            args,
            proxy.pid,
            {
              name: 'proxy',
              toolName: 'tool-0001',
              targets: false,
            },
          );
        } finally {
          proxy.kill();
        }
      } finally {
        await gw.stop();
      }
    } finally {
      up.kill();
    }
  }

  // 1b. Same client (MCP SDK, stdio), same upstream program (stdio): the client starts the upstream
  //     itself, or starts `toolgate gateway` listening on stdio, which starts the upstream.
  if (parts.includes('stdio')) {
    writeFileSync(
      join(dir, 'gateway-stdio.json'),
      JSON.stringify({ control: { ...control, cacheDir: 'cache-stdio' }, listen: { stdio: { client: 'bench' } }, clients, upstreams: { bench: upstream } }),
    );
    // The client starts both: the upstream program, and the gateway (whose CPU time is counted).
    const via = {
      command: process.execPath,
      args: [...gatewayNodeArgs(), ...gatewayEntry(), 'gateway', '--config', join(dir, 'gateway-stdio.json')],
      cwd: ROOT,
      env: { ...(process.env as Record<string, string>), TOOLGATE_LOG_LEVEL: 'warn' },
    };
    await pair('stdio client, stdio upstream', { command: upstream.command, args: upstream.args }, via, args, undefined);
  }

  const port = await freePort();
  writeFileSync(
    join(dir, 'gateway.json'),
    // Part 2 opens 200 sessions with the one key: above the default limit of a client's sessions.
    JSON.stringify({
      control: { ...control, cacheDir: 'cache' },
      listen: { http: { port } },
      clients,
      upstreams: { bench: upstream },
      limits: { sessionsPerClient: SESSIONS },
    }),
  );
  const gw = await startReadyGateway(join(dir, 'gateway.json'), port);
  gatewayStop = () => gw.stop();

  // 1c. The previous figure: the client talks stdio to the upstream directly but streamable HTTP to
  //     the gateway (stdio upstream), so it also charges the gateway with the client's own HTTP transport.
  if (parts.includes('mixed')) {
    const direct = { command: upstream.command, args: upstream.args };
    // Two different client transports: not the added latency the targets are about.
    await pair('stdio client direct, HTTP client through the gateway, stdio upstream', direct, { url: gw.url, key: KEY }, args, gw.child.pid, {
      ...GATEWAY_HOP,
      targets: false,
    });
  }

  // 2. 200 sessions × 50 calls, all at once.
  if (parts.includes('sessions')) await sessionsAndPublish(gw.url, state, key);
  if (parts.includes('list')) await lists(gw.url, bundle, state);
}

async function sessionsAndPublish(url: string, state: UpstreamFixtureState, key: TestKey): Promise<void> {
  const args = { text: 'hello' };
  const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => httpClient(url)));
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
    next.policy.bindings![`agent:round-${round}`] = ['analyst'];
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
}

async function lists(url: string, bundle: Bundle, state: UpstreamFixtureState): Promise<void> {
  // 3. tools/list with 2,000 visible tools, from a client process of its own: a bare HTTP request
  // (the gateway's answer as it leaves the process) and the SDK client (which checks every tool
  // with zod). 200 samples each after 10 warm-up lists, so p99 is not just the slowest one.
  const r = await clientJob<ListResult>({ kind: 'list', url, key: KEY, tools: TOOLS, warmup: 10, samples: LIST_SAMPLES });
  console.log(
    `\ntools/list with ${TOOLS} visible tools, bare HTTP round trips (every page of 100 followed): p50 ${f(pct(r.bare, 50))} ms, p99 ${f(pct(r.bare, 99))} ms (target < 20 ms)`,
  );
  console.log(
    `tools/list with ${r.listed} visible tools, MCP SDK client round trips (every page followed): p50 ${f(pct(r.sdk, 50))} ms, p99 ${f(pct(r.sdk, 99))} ms (target < 20 ms)`,
  );
  await listInProcess(bundle, state);
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
    config: { timeouts: { callMs: 30000, approvalMs: 60000, relistMs: 60000 } },
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

/** Interleaved sequential calls of the same tool with the same arguments on both paths, from a client process. */
async function pair(
  label: string,
  direct: Endpoint,
  via: Endpoint,
  args: Record<string, unknown>,
  /** The hop's process when this process started it; a stdio gateway is started by the client. */
  hopPid: number | undefined,
  /** What stands between: its tool name for the call, and what the lines call it. */
  hop: { name: string; toolName: string; targets: boolean } = GATEWAY_HOP,
): Promise<void> {
  const r = await clientJob<PairResult>({
    kind: 'pair',
    direct,
    via,
    directTool: 'tool-0001',
    viaTool: hop.toolName,
    args,
    warmup: 300,
    calls: SEQUENTIAL_CALLS,
    hopPid,
  });
  const [dp50, dp99, gp50, gp99] = [pct(r.direct, 50), pct(r.direct, 99), pct(r.via, 50), pct(r.via, 99)];
  console.log(`\n${label} (load ${r.load[0].toFixed(2)} → ${r.load[1].toFixed(2)}):`);
  // CPU time does not grow with the machine's load as wall time does: the steadier figure here.
  const targets = hop.targets ? [' (target ≤ 1 ms)', ' (target ≤ 3 ms)'] : ['', ''];
  if (r.cpu) console.log(`  ${hop.name} process CPU per call: user ${f(r.cpu.user)} ms, system ${f(r.cpu.system)} ms`);
  console.log(`  direct to upstream   p50 ${f(dp50)} ms  p99 ${f(dp99)} ms`);
  console.log(`  through the ${hop.name}  p50 ${f(gp50)} ms  p99 ${f(gp99)} ms`);
  console.log(`  added by the ${hop.name} p50 ${f(gp50 - dp50)} ms${targets[0]}  p99 ${f(gp99 - dp99)} ms${targets[1]}`);
}

/** Runs one job in mcp-client-process.ts (its own process) and returns what it measured. */
function clientJob<T>(job: ClientJob): Promise<T> {
  return runClientJob<T>(join(here, 'mcp-client-process.ts'), job);
}

/** The fixture upstream over streamable HTTP, as its own process (group). */
async function startHttpUpstream(stateFile: string, port: number): Promise<{ kill(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, stateFile, '-', String(port)], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c) => String(c).includes('listening') && resolve());
    child.once('exit', (code) => reject(new Error(`the HTTP upstream exited with ${code}`)));
  });
  return {
    kill() {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    },
  };
}

/** test/bench/pass-through-proxy.mjs in front of `upstreamUrl`, as its own process (group), under plain node. */
async function startPassThroughProxy(upstreamUrl: string): Promise<{ url: string; pid: number; kill(): void }> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(here, 'pass-through-proxy.mjs'), upstreamUrl, String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c) => String(c).includes('listening') && resolve());
    child.once('exit', (code) => reject(new Error(`the pass-through proxy exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid!,
    kill() {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    },
  };
}

/** `BENCH_GATEWAY_NODE_ARGS`, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, for every gateway process. */
/**
 * The gateway runs from the build, as `npx toolgate gateway` does (no tsx loader in the measured
 * process); BENCH_GATEWAY_FROM_SOURCE=1 runs it from the sources instead.
 */
function gatewayEntry(): string[] {
  return process.env.BENCH_GATEWAY_FROM_SOURCE === '1' ? GATEWAY_FROM_SOURCE : GATEWAY_BUILT;
}

function gatewayNodeArgs(): string[] {
  return process.env.BENCH_GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
}

/** A gateway process whose upstream is connected and whose bundle is loaded. */
async function startReadyGateway(configFile: string, port: number) {
  const gw = await startGatewayProcess(configFile, port, { TOOLGATE_LOG_LEVEL: 'warn' }, gatewayNodeArgs(), gatewayEntry());
  for (let i = 0; i < 600; i++) {
    if ((await gw.health()).status === 'ok') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return gw;
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
