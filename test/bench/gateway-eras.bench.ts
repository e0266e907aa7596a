// Gateway benchmark for both MCP protocol revisions, and against a plain proxy (figures only, no
// assertions), all in one run on one machine:
//  1. Added latency per tools/call over the same transport (streamable HTTP client, streamable
//     HTTP upstream), for a 2025-11-25 client (initialize, a session) and a 2026-07-28 client
//     (stateless: no initialize, no session, `_meta` on every request): the same client calling
//     the same upstream process directly and through `toolgate gateway`, one call on each in turn.
//     The upstream is built on the official 2.x server SDK, which serves both revisions, so each
//     era's direct path is that era's own. Beside it, the gateway's CPU per call in each era, and
//     the same with the client signing in with an OAuth access token instead of a static key.
//  2. Policy against no policy: `toolgate gateway` and `mcp-proxy` (the most used MCP proxy on
//     npm; no policy at all) in front of the same stdio upstream program (mcp-proxy fronts stdio
//     servers only), each reached by the same HTTP client, one call on each in turn, beside the
//     client starting the upstream itself over stdio. For both eras.
//  3. 200 concurrent clients × 50 calls through the gateway, in each era: errors, throughput, latency.
// BENCH_CALLS sets the calls per path (default 2000, after 300 warm-up calls each);
// BENCH_GATEWAY_FROM_SOURCE=1 runs the gateway from the sources instead of the build.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { ensureServerBuilt } from '../build/ensure-built.ts';
import { startLiveServer } from '../distribution/live-server.ts';
import { jwksOf, makeKey, signBytes } from '../distribution/signed-bundles.ts';
import type { UpstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { GATEWAY_BUILT, GATEWAY_FROM_SOURCE, type GatewayProcess, startGatewayProcess } from '../gateway/gateway-process.ts';
import { MCP_BUNDLE_SUBJECT, mcpBundle } from '../gateway/mcp-bundle.ts';
import { freePort } from '../support/free-port.ts';
import { runClientJob } from './client-process.ts';
import type { ConcurrentResult, Era, ErasJob, ErasPath, RotationResult } from './gateway-eras-client.ts';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = join(here, '..', '..');
const STDIO_FIXTURE = join(here, '..', 'fixtures', 'mcp', 'gateway-upstream.ts');
const HTTP_UPSTREAM = join(here, 'gateway-eras-upstream.ts');
const MCP_PROXY_BIN = join(dirname(createRequire(import.meta.url).resolve('mcp-proxy/package.json')), 'dist', 'bin', 'mcp-proxy.mjs');
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const WARMUP = 300;
const CLIENTS = 200;
const CALLS_EACH = 50;
const KEY = 'bench-eras-client-key-0123456789';
const ERAS: Era[] = ['2025-11-25', '2026-07-28'];
const ARGS = { text: 'hello' };

process.removeAllListeners('warning');

const dir = mkdtempSync(join(tmpdir(), 'toolgate-gw-eras-'));
const srv = await startLiveServer();
const stops: Array<() => Promise<void> | void> = [];
try {
  await run();
} finally {
  for (const stop of stops.reverse()) await stop();
  await srv.dispose();
  rmSync(dir, { recursive: true, force: true });
}

async function run(): Promise<void> {
  if (process.env.BENCH_GATEWAY_FROM_SOURCE !== '1') await ensureServerBuilt();
  const text = { type: 'object', properties: { text: { type: 'string', maxLength: 100 } }, required: ['text'], additionalProperties: false };
  const state: UpstreamFixtureState = { tools: [{ name: 'echo', description: 'Echoes the text back.', inputSchema: text }] };
  const stateFile = join(dir, 'state.json');
  writeFileSync(stateFile, JSON.stringify(state));

  // The tenant's bundle pins the upstream's echo for the client's subject; every gateway pulls it.
  await srv.createTenant('eras');
  const key = await makeKey('eras-key');
  const bundle = mcpBundle('eras', 1, 'bench', state);
  const bundleText = canonicalJson(bundle);
  await srv.place('eras', 1, { text: bundleText, signature: await signBytes(bundleText, key), revision: bundle.revision });
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify(jwksOf(key)));
  const control = { url: srv.url, tenant: 'eras', token: await srv.tokenFor('runtime', ['eras']), jwksFile: 'jwks.json' };
  // The measuring client, and the many clients of part 3, each with a key of its own.
  const manyKeys = Array.from({ length: CLIENTS }, (_, i) => `bench-eras-many-${String(i).padStart(3, '0')}-0123456789`);
  const clients = [
    { name: 'bench', key: KEY, subject: MCP_BUNDLE_SUBJECT },
    ...manyKeys.map((k, i) => ({ name: `many-${i}`, key: k, subject: MCP_BUNDLE_SUBJECT })),
  ];

  console.log(
    `tools/call, ${CALLS} calls per path after ${WARMUP} warm-up calls, the paths called one after the other in turn; added = p(through) − p(direct). Load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  // 1. Same transport on both sides, each era against its own direct path.
  const upPort = await freePort();
  const upstream = await startProcess([process.execPath, '--import', 'tsx', HTTP_UPSTREAM, stateFile, String(upPort)], 'the HTTP upstream');
  stops.push(() => upstream.kill());
  const upstreamUrl = `http://127.0.0.1:${upPort}/mcp`;
  // The same gateway also takes OAuth access tokens from an issuer (its key set served here): the
  // token is verified once per connection, so a token-authenticated call should cost what a keyed one does.
  const gwPort = await freePort();
  const resource = `http://127.0.0.1:${gwPort}/mcp`;
  const issuer = await startIssuer();
  stops.push(() => issuer.close());
  const token = await issuer.token(resource, 'bench-assistant');
  const gwHttp = await startGateway(
    'gateway-http.json',
    {
      control: { ...control, cacheDir: 'cache-http' },
      clients: [...clients, { name: 'oauth-bench', subject: MCP_BUNDLE_SUBJECT }],
      auth: {
        oauth: {
          resource,
          issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }],
          clients: [{ claim: 'sub', value: 'bench-assistant', client: 'oauth-bench' }],
        },
      },
      upstreams: { bench: { kind: 'http', url: upstreamUrl } },
    },
    gwPort,
  );
  const sameTransport: Record<string, Figures> = {};
  const rows: Array<{ era: Era; credential: 'key' | 'token' }> = ERAS.flatMap((era) => [
    { era, credential: 'key' as const },
    { era, credential: 'token' as const },
  ]);
  for (const { era, credential } of rows) {
    const r = await clientJob<RotationResult>({
      kind: 'rotation',
      paths: [
        { label: 'direct', at: { url: upstreamUrl, era }, tool: 'echo' },
        { label: 'gateway', at: { url: gwHttp.url, key: credential === 'key' ? KEY : token, era }, tool: 'mcp__bench__echo', hopPid: gwHttp.child.pid },
      ],
      args: ARGS,
      warmup: WARMUP,
      calls: CALLS,
    });
    sameTransport[`${era} ${credential}`] = figures(r, 'gateway');
  }
  console.log('\n1. Added latency over the same transport (streamable HTTP client → gateway → streamable HTTP upstream), per protocol revision:');
  table(
    ['era', 'client signs in with', 'direct p50', 'direct p99', 'gateway p50', 'gateway p99', 'added p50', 'added p99', 'gateway CPU/call', 'load'],
    rows.map(({ era, credential }) => {
      const f = sameTransport[`${era} ${credential}`];
      const how = credential === 'key' ? 'static key' : 'OAuth access token';
      return [era, how, ms(f.direct.p50), ms(f.direct.p99), ms(f.via.p50), ms(f.via.p99), ms(f.added.p50), ms(f.added.p99), ms(f.cpu), f.load];
    }),
  );
  console.log('   targets: added p50 ≤ 0.500 ms, p99 ≤ 2.000 ms in both eras');
  const [legacy, modern] = [sameTransport['2025-11-25 key'], sameTransport['2026-07-28 key']];
  console.log(
    `   a stateless 2026-07-28 tools/call against a 2025-11-25 one through the gateway: added p50 ${ms(modern.added.p50)} vs ${ms(legacy.added.p50)} ms, ` +
      `p99 ${ms(modern.added.p99)} vs ${ms(legacy.added.p99)} ms; gateway CPU per call ${ms(modern.cpu)} vs ${ms(legacy.cpu)} ms ` +
      `(${modern.cpu <= legacy.cpu ? 'no more' : 'more'} CPU for the stateless call)`,
  );

  // 2. The gateway and mcp-proxy in front of the same stdio upstream program.
  const stdioUpstream = { command: process.execPath, args: ['--import', 'tsx', STDIO_FIXTURE, stateFile, '-'] };
  const gwStdio = await startGateway('gateway-stdio-upstream.json', {
    control: { ...control, cacheDir: 'cache-stdio' },
    clients,
    upstreams: { bench: { kind: 'stdio', ...stdioUpstream } },
  });
  const proxyPort = await freePort();
  const proxy = await startProcess(
    [
      process.execPath,
      MCP_PROXY_BIN,
      '--port',
      String(proxyPort),
      '--host',
      '127.0.0.1',
      '--server',
      'stream',
      '--',
      stdioUpstream.command,
      ...stdioUpstream.args,
    ],
    'mcp-proxy',
    `http://127.0.0.1:${proxyPort}/mcp`,
  );
  stops.push(() => proxy.kill());
  const proxyUrl = `http://127.0.0.1:${proxyPort}/mcp`;
  const side: Record<Era, { gateway: Figures; proxy: Figures }> = {} as never;
  for (const era of ERAS) {
    const paths: ErasPath[] = [
      { label: 'direct', at: { ...stdioUpstream, era: '2025-11-25' }, tool: 'echo' },
      { label: 'gateway', at: { url: gwStdio.url, key: KEY, era }, tool: 'mcp__bench__echo', hopPid: gwStdio.child.pid },
      { label: 'mcp-proxy', at: { url: proxyUrl, era }, tool: 'echo', hopPid: proxy.pid },
    ];
    const r = await clientJob<RotationResult>({ kind: 'rotation', paths, args: ARGS, warmup: WARMUP, calls: CALLS });
    side[era] = { gateway: figures(r, 'gateway'), proxy: figures(r, 'mcp-proxy') };
  }
  console.log(
    `\n2. Policy against no policy: the same HTTP client through toolgate gateway and through mcp-proxy ${mcpProxyVersion()} (no policy), both in front of the same stdio upstream program;` +
      '\n   added = against the client starting that program itself over stdio (the same baseline for both, so the two columns compare directly):',
  );
  table(
    ['era (client ↔ hop)', 'hop', 'p50', 'p99', 'added p50', 'added p99', 'hop CPU/call'],
    ERAS.flatMap((era) =>
      (['gateway', 'proxy'] as const).map((h) => {
        const f = side[era][h];
        return [era, h === 'gateway' ? 'toolgate gateway' : 'mcp-proxy', ms(f.via.p50), ms(f.via.p99), ms(f.added.p50), ms(f.added.p99), ms(f.cpu)];
      }),
    ),
  );
  for (const era of ERAS) {
    const { gateway, proxy: plain } = side[era];
    console.log(
      `   ${era}: policy (decide, pins, redaction, budgets, records) through the gateway adds ${ms(gateway.added.p50)} ms at p50 where mcp-proxy, with no policy, adds ${ms(plain.added.p50)} ms ` +
        `(p99 ${ms(gateway.added.p99)} vs ${ms(plain.added.p99)} ms; CPU per call ${ms(gateway.cpu)} vs ${ms(plain.cpu)} ms)`,
    );
  }

  // 3. Many clients at once, in each era, through the gateway with the HTTP upstream.
  console.log(`\n3. ${CLIENTS} concurrent clients × ${CALLS_EACH} calls through the gateway (HTTP upstream):`);
  for (const era of ERAS) {
    const r = await clientJob<ConcurrentResult>({
      kind: 'concurrent',
      at: { url: gwHttp.url, era },
      keys: manyKeys,
      tool: 'mcp__bench__echo',
      args: ARGS,
      callsEach: CALLS_EACH,
    });
    const calls = CLIENTS * CALLS_EACH;
    console.log(
      `   ${era}: ${r.errors} errors in ${calls} calls${r.firstError ? ` (first: ${r.firstError})` : ''}, ${Math.round(calls / (r.wallMs / 1000))} calls/s, p50 ${ms(pct(r.latencies, 50))} ms, p99 ${ms(pct(r.latencies, 99))} ms`,
    );
  }
}

type Figures = {
  direct: { p50: number; p99: number };
  via: { p50: number; p99: number };
  added: { p50: number; p99: number };
  cpu: number;
  load: string;
};

function figures(r: RotationResult, hop: string): Figures {
  const d = r.samples.direct;
  const v = r.samples[hop];
  const direct = { p50: pct(d, 50), p99: pct(d, 99) };
  const via = { p50: pct(v, 50), p99: pct(v, 99) };
  const cpu = r.cpu[hop];
  return {
    direct,
    via,
    added: { p50: via.p50 - direct.p50, p99: via.p99 - direct.p99 },
    cpu: cpu ? cpu.user + cpu.system : Number.NaN,
    load: `${r.load[0].toFixed(2)}→${r.load[1].toFixed(2)}`,
  };
}

async function startGateway(file: string, config: Record<string, unknown>, port?: number): Promise<GatewayProcess> {
  port ??= await freePort();
  writeFileSync(join(dir, file), JSON.stringify({ ...config, listen: { http: { port } } }));
  const entry = process.env.BENCH_GATEWAY_FROM_SOURCE === '1' ? GATEWAY_FROM_SOURCE : GATEWAY_BUILT;
  const gw = await startGatewayProcess(join(dir, file), port, { TOOLGATE_LOG_LEVEL: 'warn' }, [], entry);
  stops.push(() => gw.stop());
  for (let i = 0; i < 600; i++) {
    if ((await gw.health()).status === 'ok') return gw;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the gateway (${file}) did not become ready: ${gw.stderr().slice(-1000)}`);
}

/** An OAuth issuer as the gateway sees one: an ES256 key set on 127.0.0.1, and tokens signed with its key. */
async function startIssuer(): Promise<{ issuer: string; jwksUri: string; token(audience: string, sub: string): Promise<string>; close(): void }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' }] });
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(jwks));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    token: (audience, sub) =>
      new SignJWT({ sub })
        .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('2h')
        .sign(privateKey),
    close: () => server.close(),
  };
}

/**
 * A process (group) of its own, ready when it prints `listening` or, given `url`, when the URL
 * answers at all.
 */
async function startProcess(argv: string[], what: string, url?: string): Promise<{ pid: number; kill(): void }> {
  const child: ChildProcess = spawn(argv[0], argv.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let err = '';
  child.stderr!.on('data', (c) => (err += String(c)));
  child.stdout!.on('data', () => undefined);
  const kill = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${err.slice(-1000)}`))));
  const ready = url
    ? (async () => {
        for (let i = 0; i < 600; i++) {
          try {
            await fetch(url, { method: 'GET' });
            return;
          } catch {
            await new Promise((r) => setTimeout(r, 100));
          }
        }
        throw new Error(`${what} did not start listening`);
      })()
    : new Promise<void>((resolve) => child.stdout!.on('data', (c) => String(c).includes('listening') && resolve()));
  try {
    await Promise.race([ready, exited]);
  } catch (e) {
    kill();
    throw e;
  }
  exited.catch(() => undefined);
  return { pid: child.pid!, kill };
}

/** Runs one job in gateway-eras-client.ts (its own process) and returns what it measured. */
function clientJob<T>(job: ErasJob): Promise<T> {
  return runClientJob<T>(join(here, 'gateway-eras-client.ts'), job);
}

function mcpProxyVersion(): string {
  return (createRequire(import.meta.url)('mcp-proxy/package.json') as { version: string }).version;
}

function table(head: string[], rows: Array<Array<string>>): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `   ${cells.map((c, i) => c.padEnd(widths[i])).join('  ')}`;
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

function ms(x: number): string {
  return x.toFixed(3);
}
