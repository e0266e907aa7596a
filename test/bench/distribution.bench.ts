// Bundle distribution benchmark (figures only, no assertions):
//  1. GET …/bundles/latest at 50 connections, 200 and 304, requests/s and p99 (autocannon), beside
//     nginx serving the same bytes from a file on another loopback port (one worker each side), and
//     the CPU each server spent per request (from /proc: other load on the machine slows a run
//     down, but barely changes what a request costs the server).
//  2. Publish (POST …/bundles: compile, sign, commit) → 1,000 long-polling pulls holding the new
//     bytes (p50, p99), 100-tool bundle sent gzip-encoded (as the SDK's fetch asks), and what
//     decoding and verifying it costs one runtime.
//  3. End to end: publish → real SDK clients (createBundleClient) holding the new version, pulled,
//     verified and loaded, measured where they run: SDK_HOSTS separate processes
//     (sdk-client-process.ts) of SDK_CLIENTS_PER_HOST clients each.
// The server runs in a child process (this file with --serve), so the load generator and the
// server do not share an event loop.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { ChildProcessByStdio, ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type Interface, createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { freePort } from '../support/free-port.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const CONNECTIONS = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const POLLERS = 1000;
const ROUNDS = 5;
const ROUNDS_THROUGHPUT = Number(process.env.BENCH_THROUGHPUT_ROUNDS ?? 2);
const SDK_HOSTS = Number(process.env.BENCH_SDK_HOSTS ?? 10);
const SDK_CLIENTS_PER_HOST = Number(process.env.BENCH_SDK_CLIENTS_PER_HOST ?? 10);
const SDK_ROUNDS = 3;
// USER_HZ, the unit of CPU times in /proc: 100 on every Linux architecture Node runs on.
const CLOCK_TICKS_PER_SECOND = 100;

type Hello = {
  url: string;
  bareNodeUrl: string;
  jwks: { keys: never[] };
  big: { token: string; etag: string; bytes: number };
  acme: { token: string; etag: string };
};

if (process.argv[2] === '--serve') await serveRole();
else await main();

// Server role: a live Toolgate with a ~200 KB hand-signed bundle (tenant big, for throughput) and
// tenant acme with 100 tools published through the real compiler, signer and publish route.
async function serveRole(): Promise<void> {
  const { startLiveServer } = await import('../distribution/live-server.ts');
  const { makeKey, makeSignedBundle } = await import('../distribution/signed-bundles.ts');
  const srv = await startLiveServer();
  const must = async (method: string, path: string, body: unknown, status: number) => {
    const r = await srv.api(method, path, { body });
    if (r.status !== status) throw new Error(`${method} ${path} answered ${r.status}: ${r.text}`);
    return r.json;
  };
  await srv.createTenant('big');
  const big = await makeSignedBundle({ tenant: 'big', version: 1, tools: 300 }, await makeKey('bench-key'));
  await srv.place('big', 1, { ...big, revision: big.bundle.revision });

  const tools = Number(process.env.BENCH_TOOLS ?? 100);
  for (let i = 0; i < tools; i++) {
    await must(
      'POST',
      '/v1/tools',
      {
        id: `core__bench-tool-${String(i).padStart(3, '0')}`,
        description: `Benchmark tool ${i}: looks records up by query and returns the matching ones.`,
        inputSchema: {
          type: 'object',
          additionalProperties: false,
          required: ['query'],
          properties: { query: { type: 'string', maxLength: 200 }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
        },
        effect: i % 4 === 3 ? 'state_change' : 'read_only',
        redaction: { allow: ['result', 'items[].id'] },
      },
      201,
    );
  }
  const policy = {
    roles: { agent: { groups: ['default'], allow: ['core__bench-*'], deny: ['core__bench-tool-000'], requireApproval: ['state_change'] } },
    bindings: { 'agent:bench': ['agent'] },
    profiles: {},
    bundleTtlSeconds: 86400,
  };
  await must('POST', '/v1/tenants', { id: 'acme', name: 'Bench', policy }, 201);
  const first = await must('POST', '/v1/tenants/acme/bundles', { reason: 'benchmark' }, 201);
  const bigToken = await srv.tokenFor('runtime', ['big']);
  const hello = {
    url: srv.url,
    bareNodeUrl: await bareNode304(srv.url, bigToken, big.bundle.revision),
    jwks: (await srv.api('GET', '/.well-known/jwks.json', { token: null })).json,
    big: { token: bigToken, etag: `"${big.bundle.revision}"`, bytes: Buffer.byteLength(big.text) },
    acme: { token: await srv.tokenFor('runtime', ['acme']), etag: `"${first.revision}"` },
  };
  process.stdout.write(`${JSON.stringify(hello)}\n`);
  const cache = srv.deps.bundles;
  let committedAt = 0;
  srv.deps.publishEvents.on('published', () => (committedAt = performance.timeOrigin + performance.now()));
  let cpuAtPublish = process.cpuUsage();
  let round = 0;
  for await (const line of createInterface({ input: process.stdin })) {
    const [cmd] = line.trim().split(' ');
    if (cmd === 'waiting') process.stdout.write(`${JSON.stringify({ waiting: cache.waiting('acme') })}\n`);
    else if (cmd === 'cpu') {
      // CPU the server spent since the publish began: a figure the machine's other load does not inflate.
      const used = process.cpuUsage(cpuAtPublish);
      process.stdout.write(`${JSON.stringify({ cpuMs: (used.user + used.system) / 1000 })}\n`);
    } else if (cmd === 'publish') {
      // A draft change (a new state), then the timed part: compile, sign, commit, wake the pulls.
      await must('POST', '/v1/states', { name: `bench-${++round}`, description: 'changes the catalog' }, 201);
      cpuAtPublish = process.cpuUsage();
      const t0 = performance.timeOrigin + performance.now();
      const out = await must('POST', '/v1/tenants/acme/bundles', { reason: 'benchmark' }, 201);
      const publishMs = performance.timeOrigin + performance.now() - t0;
      process.stdout.write(`${JSON.stringify({ published: out.version, t0, committed: committedAt, publishMs, etag: `"${out.revision}"` })}\n`);
    } else if (cmd === 'quit') break;
  }
  await srv.dispose();
  process.exit(0);
}

/**
 * A bare node:http server in the server process answering a matching If-None-Match with the same
 * 304 headers Toolgate sends (a fresh request id each): the least any Node server could spend on it.
 */
async function bareNode304(toolgateUrl: string, token: string, revision: string): Promise<string> {
  const etag = `"${revision}"`;
  const sample = await fetch(`${toolgateUrl}/v1/tenants/big/bundles/latest`, {
    headers: { authorization: `Bearer ${token}`, 'if-none-match': etag, 'accept-encoding': 'identity' },
  });
  if (sample.status !== 304) throw new Error(`a conditional pull answered ${sample.status}, not 304`);
  const headers = [...sample.headers].filter(([name]) => name !== 'x-request-id' && name !== 'date' && name !== 'connection' && name !== 'keep-alive');
  const server = http.createServer((req, res) => {
    if (req.headers['if-none-match'] !== etag) return void res.writeHead(404).end();
    res.writeHead(304, [...headers.flat(), 'x-request-id', randomUUID()]).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function main(): Promise<void> {
  const child = spawn(
    process.execPath,
    [...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx', fileURLToPath(import.meta.url), '--serve'],
    { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  // Listened for from the start: the server may be gone before the finally below gets to wait for it.
  const exited = new Promise((r) => child.once('exit', r));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async <T>(): Promise<T> => JSON.parse(String((await lines.next()).value)) as T;
  const send = (cmd: string) => child.stdin.write(`${cmd}\n`);
  const hello = await next<Hello>();
  let nginx: Awaited<ReturnType<typeof startNginx>>;
  try {
    console.log(`bundle for throughput: ${(hello.big.bytes / 1024).toFixed(0)} KiB · ${CONNECTIONS} connections · ${SECONDS}s per run`);
    // BENCH_PART=throughput|publish|sdk runs one part (for quick looks; publish includes sdk); the default runs all.
    const part = process.env.BENCH_PART;
    if (!part || part === 'throughput') {
      nginx = await startNginx(hello);
      await throughput(hello, nginx, child.pid);
    }
    if (!part || part === 'publish') await publishToPollers(hello, next, send);
    if (!part || part === 'publish' || part === 'sdk') await publishToSdkHosts(hello, next, send);
  } finally {
    send('quit');
    await nginx?.stop();
    await exited;
  }
}

type Cannon = { rps: number; p50: number; p99: number; statuses: Record<string, number>; errors: number; cpuUsPerRequest: number };

/** CPU time (user + system, ms) the processes have used so far, from /proc (Linux); NaN elsewhere. */
function cpuMs(pids: number[]): number {
  let ticks = 0;
  try {
    for (const pid of pids) {
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
  } catch {
    return Number.NaN;
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** A process and its children (nginx's master and workers). */
function processTree(pid: number): number[] {
  const pids = [pid];
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === pid) pids.push(Number(entry));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return pids;
}

function cannon(url: string, headers: Record<string, string>, seconds: number, serverPids: number[] = []): Cannon {
  const cpuBefore = cpuMs(serverPids);
  const args = ['-c', String(CONNECTIONS), '-d', String(seconds), '-j'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  const bin = join(root, 'node_modules', 'autocannon', 'autocannon.js');
  const r = spawnSync(process.execPath, [bin, ...args, url], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`autocannon failed: ${r.stderr}`);
  const j = JSON.parse(r.stdout);
  const cpuUsed = cpuMs(serverPids) - cpuBefore;
  return {
    cpuUsPerRequest: (cpuUsed * 1000) / j.requests.total,
    rps: j.requests.average,
    p50: j.latency.p50,
    p99: j.latency.p99,
    statuses: { '2xx': j['2xx'], '3xx': j['3xx'] ?? 0, '4xx': j['4xx'] ?? 0, '5xx': j['5xx'] ?? 0 },
    errors: j.errors + j.timeouts,
  };
}

async function throughput(hello: Hello, nginx: { url: string; pid: number | undefined } | undefined, serverPid: number | undefined): Promise<void> {
  const nginxUrl = nginx?.url;
  const path = '/v1/tenants/big/bundles/latest';
  const auth = { authorization: `Bearer ${hello.big.token}` };
  const nginxEtag = nginxUrl ? (await fetch(nginxUrl + path)).headers.get('etag') : null;
  const toolgatePids = serverPid ? [serverPid] : [];
  const nginxPids = nginx?.pid ? processTree(nginx.pid) : [];
  const runs: [string, string, Record<string, string>, number, number[]][] = [
    ['toolgate 200', hello.url + path, auth, 200, toolgatePids],
    ['toolgate 304', hello.url + path, { ...auth, 'if-none-match': hello.big.etag }, 304, toolgatePids],
    ['node     304', hello.bareNodeUrl + path, { ...auth, 'if-none-match': hello.big.etag }, 304, toolgatePids],
  ];
  if (nginxUrl && nginxEtag) {
    runs.push(['nginx    200', nginxUrl + path, {}, 200, nginxPids], ['nginx    304', nginxUrl + path, { 'if-none-match': nginxEtag }, 304, nginxPids]);
  }
  // Interleaved rounds, best of each: the machine is shared, and interference only ever slows a run down.
  const results = new Map<string, Cannon>();
  const leastCpu = new Map<string, number>();
  for (let round = 1; round <= ROUNDS_THROUGHPUT; round++) {
    for (const [name, url, headers, expect, pids] of runs) {
      cannon(url, headers, 1); // warm-up
      const r = cannon(url, headers, SECONDS, pids);
      const best = results.get(name);
      if (!best || r.rps > best.rps) results.set(name, r);
      if (!(r.cpuUsPerRequest >= (leastCpu.get(name) ?? Number.POSITIVE_INFINITY))) leastCpu.set(name, r.cpuUsPerRequest);
      const wrong =
        expect === 200
          ? r.statuses['2xx'] === 0 || r.statuses['3xx'] + r.statuses['4xx'] + r.statuses['5xx'] > 0
          : r.statuses['3xx'] === 0 || r.statuses['2xx'] + r.statuses['4xx'] + r.statuses['5xx'] > 0;
      console.log(
        `  round ${round} ${name}: ${r.rps.toFixed(0).padStart(7)} req/s · p50 ${r.p50} ms · p99 ${r.p99} ms · ${r.cpuUsPerRequest.toFixed(1)} µs server CPU/request${r.errors ? ` · ${r.errors} errors` : ''}${wrong ? ` · UNEXPECTED STATUSES ${JSON.stringify(r.statuses)}` : ''}`,
      );
    }
  }
  for (const [name, r] of results)
    console.log(`${name} (best of ${ROUNDS_THROUGHPUT}): ${r.rps.toFixed(0).padStart(7)} req/s · p50 ${r.p50} ms · p99 ${r.p99} ms`);
  if (!nginxUrl) {
    console.log('nginx not found (Debian package nginx): no static-server comparison');
    return;
  }
  for (const code of ['200', '304']) {
    const t = results.get(`toolgate ${code}`)!;
    const n = results.get(`nginx    ${code}`)!;
    console.log(`ratio ${code}: toolgate/nginx = ${((t.rps / n.rps) * 100).toFixed(0)}% of requests/s (target ≥ 70%) · p99 ${t.p99} vs ${n.p99} ms`);
  }
  const bare = results.get('node     304')!;
  console.log(
    `bare node:http 304/nginx = ${((bare.rps / results.get('nginx    304')!.rps) * 100).toFixed(0)}% · toolgate 304/bare node:http = ${((results.get('toolgate 304')!.rps / bare.rps) * 100).toFixed(0)}% of requests/s`,
  );
  // What a request costs each server: when both are CPU-bound its inverse ratio is the requests/s
  // ratio; when the load generator limits the rate instead (nginx), requests/s come out closer.
  for (const code of ['200', '304']) {
    const t = leastCpu.get(`toolgate ${code}`) ?? Number.NaN;
    const n = leastCpu.get(`nginx    ${code}`) ?? Number.NaN;
    console.log(
      `server CPU per ${code} (least of ${ROUNDS_THROUGHPUT}): toolgate ${t.toFixed(1)} µs · nginx ${n.toFixed(1)} µs · nginx/toolgate = ${((n / t) * 100).toFixed(0)}%`,
    );
  }
}

async function publishToPollers(hello: Hello, next: <T>() => Promise<T>, send: (c: string) => void): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: POLLERS });
  const url = new URL(hello.url);
  let etag = hello.acme.etag;
  const all: number[] = [];
  const afterCommit: number[] = [];
  let bestRound: { p50: number; p99: number; version: number } | undefined;
  let lastWire: Buffer | undefined;
  let lastSignature = '';
  for (let round = 0; round < ROUNDS; round++) {
    const done: Promise<{ at: number; status: number; body: Buffer; signature: string }>[] = [];
    for (let i = 0; i < POLLERS; i++) {
      done.push(
        new Promise((resolve, reject) => {
          const req = http.get(
            {
              host: url.hostname,
              port: url.port,
              path: '/v1/tenants/acme/bundles/latest?wait=60',
              agent,
              headers: { authorization: `Bearer ${hello.acme.token}`, 'if-none-match': etag, 'accept-encoding': 'gzip' },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () =>
                resolve({
                  at: performance.timeOrigin + performance.now(),
                  status: res.statusCode ?? 0,
                  body: Buffer.concat(chunks),
                  signature: String(res.headers['toolgate-signature'] ?? ''),
                }),
              );
              res.on('error', reject);
            },
          );
          req.on('error', reject);
        }),
      );
    }
    for (;;) {
      send('waiting');
      const { waiting } = await next<{ waiting: number }>();
      if (waiting >= POLLERS) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    send('publish');
    const pub = await next<{ published: number; t0: number; committed: number; publishMs: number; etag: string }>();
    const answers = await Promise.all(done);
    send('cpu');
    const { cpuMs } = await next<{ cpuMs: number }>();
    const bad = answers.filter((a) => a.status !== 200).length;
    const lat = answers.map((a) => a.at - pub.t0).sort((a, b) => a - b);
    const fromCommit = answers.map((a) => a.at - pub.committed).sort((a, b) => a - b);
    all.push(...lat);
    afterCommit.push(...fromCommit);
    if (!bestRound || pct(lat, 50) < bestRound.p50) bestRound = { p50: pct(lat, 50), p99: pct(lat, 99), version: pub.published };
    console.log(
      `publish v${pub.published}: POST answered in ${pub.publishMs.toFixed(0)} ms, committed at +${(pub.committed - pub.t0).toFixed(0)} ms → ${POLLERS} long-polls answered: p50 ${pct(lat, 50).toFixed(1)} ms · p99 ${pct(lat, 99).toFixed(1)} ms from the POST (p50 ${pct(fromCommit, 50).toFixed(1)} · p99 ${pct(fromCommit, 99).toFixed(1)} ms from the commit) · server CPU ${cpuMs.toFixed(0)} ms${bad ? ` · ${bad} not 200` : ''}`,
    );
    etag = pub.etag;
    lastWire = answers[0].body;
    lastSignature = answers[0].signature;
  }
  agent.destroy();
  all.sort((a, b) => a - b);
  afterCommit.sort((a, b) => a - b);
  console.log(`least disturbed round (v${bestRound!.version}): p50 ${bestRound!.p50.toFixed(1)} ms · p99 ${bestRound!.p99.toFixed(1)} ms from the POST`);
  console.log(
    `publish → ${POLLERS} pulls holding the new bytes, ${ROUNDS} rounds: p50 ${pct(all, 50).toFixed(1)} ms · p99 ${pct(all, 99).toFixed(1)} ms from the POST; p50 ${pct(afterCommit, 50).toFixed(1)} ms · p99 ${pct(afterCommit, 99).toFixed(1)} ms from the commit (targets p50 < 100 ms, p99 < 500 ms)`,
  );

  // Each runtime then verifies what it received; on a fleet that happens in parallel, one per host.
  const { verifyBundle } = await import('../../runtime/verify-bundle.ts');
  const trustedKeys = hello.jwks;
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 60; i++) {
    const t = performance.now();
    const body = gunzipSync(lastWire!);
    bytes = body.length;
    const r = await verifyBundle(body, lastSignature, { trustedKeys, tenant: 'acme' });
    if (!r.ok) throw new Error(`bench bundle refused: ${r.code} ${r.message}`);
    if (i >= 10) times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(
    `gunzip + verifyBundle + load, 100-tool bundle (${(bytes / 1024).toFixed(0)} KiB, ${(lastWire!.length / 1024).toFixed(0)} KiB gzip on the wire): p50 ${pct(times, 50).toFixed(2)} ms · p99 ${pct(times, 99).toFixed(2)} ms per runtime`,
  );
}

type Host = { child: ChildProcessByStdio<Writable, Readable, null>; lines: Interface };

/**
 * Publish → every SDK client holding the new version, end to end: each client's own 'update' (the
 * bundle pulled, verified and loaded) timed in its own process, against the start of the POST.
 */
async function publishToSdkHosts(hello: Hello, next: <T>() => Promise<T>, send: (c: string) => void): Promise<void> {
  const total = SDK_HOSTS * SDK_CLIENTS_PER_HOST;
  const held: { version: number; at: number }[] = [];
  const hosts: Host[] = [];
  try {
    const ready: Promise<void>[] = [];
    for (let h = 0; h < SDK_HOSTS; h++) {
      const setup = { url: hello.url, tenant: 'acme', token: hello.acme.token, jwks: hello.jwks, count: SDK_CLIENTS_PER_HOST, name: `bench-host-${h}` };
      const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'sdk-client-process.ts')], {
        cwd: root,
        stdio: ['pipe', 'pipe', 'inherit'],
        env: { ...process.env, BENCH_CLIENT_SETUP: JSON.stringify(setup) },
      });
      const lines = createInterface({ input: child.stdout });
      hosts.push({ child, lines });
      ready.push(
        new Promise((resolve, reject) => {
          child.once('exit', (code) => reject(new Error(`SDK host ${h} exited with ${code} before its clients were ready`)));
          lines.on('line', (line) => {
            const m = JSON.parse(line) as { ready?: number; held?: number; at?: number };
            if (m.ready !== undefined) resolve();
            else if (m.held !== undefined && m.at !== undefined) held.push({ version: m.held, at: m.at });
          });
        }),
      );
    }
    await Promise.all(ready);
    const all: number[] = [];
    const afterCommit: number[] = [];
    // Round 0 warms the clients' code paths up and is not counted.
    for (let round = 0; round <= SDK_ROUNDS; round++) {
      for (;;) {
        send('waiting');
        if ((await next<{ waiting: number }>()).waiting >= total) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      send('publish');
      const pub = await next<{ published: number; t0: number; committed: number }>();
      const deadline = Date.now() + 60_000;
      const mine = () => held.filter((e) => e.version === pub.published);
      while (mine().length < total) {
        if (Date.now() > deadline) throw new Error(`only ${mine().length} of ${total} SDK clients came to hold v${pub.published} within 60 s`);
        await new Promise((r) => setTimeout(r, 5));
      }
      const lat = mine()
        .map((e) => e.at - pub.t0)
        .sort((a, b) => a - b);
      const fromCommit = mine()
        .map((e) => e.at - pub.committed)
        .sort((a, b) => a - b);
      if (round > 0) {
        all.push(...lat);
        afterCommit.push(...fromCommit);
      }
      console.log(
        `${round === 0 ? '(warm-up) ' : ''}publish v${pub.published} → ${total} SDK clients in ${SDK_HOSTS} processes holding it (pulled, verified, loaded): p50 ${pct(lat, 50).toFixed(1)} ms · p99 ${pct(lat, 99).toFixed(1)} ms · last ${lat[lat.length - 1].toFixed(1)} ms from the POST`,
      );
    }
    all.sort((a, b) => a - b);
    afterCommit.sort((a, b) => a - b);
    console.log(
      `publish → runtimes holding the new version, end to end (${total} SDK clients, ${SDK_HOSTS} processes, ${SDK_ROUNDS} rounds): p50 ${pct(all, 50).toFixed(1)} ms · p99 ${pct(all, 99).toFixed(1)} ms from the POST; p50 ${pct(afterCommit, 50).toFixed(1)} ms · p99 ${pct(afterCommit, 99).toFixed(1)} ms from the commit`,
    );
  } finally {
    await Promise.all(
      hosts.map(
        ({ child }) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.stdin.end('quit\n');
          }),
      ),
    );
  }
}

async function startNginx(hello: Hello): Promise<{ url: string; pid: number | undefined; stop: () => Promise<void> } | undefined> {
  const bin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
  if (!bin) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-bench-nginx-'));
  const www = join(dir, 'www', 'v1', 'tenants', 'big', 'bundles');
  await mkdir(www, { recursive: true });
  await mkdir(join(dir, 'tmp'));
  const res = await fetch(`${hello.url}/v1/tenants/big/bundles/latest`, { headers: { authorization: `Bearer ${hello.big.token}` } });
  const body = Buffer.from(await res.arrayBuffer());
  await writeFile(join(www, 'latest'), body);
  const port = await freePort();
  const signature = res.headers.get('toolgate-signature') ?? '';
  await writeFile(
    join(dir, 'nginx.conf'),
    `daemon off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path ${join(dir, 'tmp')};
  proxy_temp_path ${join(dir, 'tmp')};
  fastcgi_temp_path ${join(dir, 'tmp')};
  uwsgi_temp_path ${join(dir, 'tmp')};
  scgi_temp_path ${join(dir, 'tmp')};
  server {
    listen 127.0.0.1:${port};
    location / {
      root ${join(dir, 'www')};
      default_type application/json;
      add_header Cache-Control "public, no-cache";
      add_header Toolgate-Signature "${signature}";
    }
  }
}
`,
  );
  // Workers may run as an unprivileged user: let them read the files.
  for (const p of [dir, join(dir, 'www'), join(dir, 'www', 'v1'), join(dir, 'www', 'v1', 'tenants'), join(dir, 'www', 'v1', 'tenants', 'big'), www])
    await chmod(p, 0o755);
  await chmod(join(www, 'latest'), 0o644);
  const proc: ChildProcessWithoutNullStreams = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: 'pipe' });
  let failed = '';
  proc.stderr.on('data', (d) => (failed += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(`${url}/v1/tenants/big/bundles/latest`);
      if (r.status === 200 && Buffer.from(await r.arrayBuffer()).equals(body)) {
        console.log(`nginx (${bin}, 1 worker) serving the same ${body.length} bytes at ${url}`);
        return {
          url,
          pid: proc.pid,
          stop: async () => {
            proc.kill('SIGQUIT');
            await new Promise((r) => proc.once('exit', r));
            await rm(dir, { recursive: true, force: true });
          },
        };
      }
    } catch {
      // not listening yet
    }
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  console.log(`nginx did not start (${failed.trim() || 'no output'}): no static-server comparison`);
  proc.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
  return undefined;
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
