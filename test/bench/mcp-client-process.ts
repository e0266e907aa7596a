// The measuring MCP client of the gateway benchmark, in a process of its own, as a real MCP client
// is. Measured from the benchmark's own process, every figure also carried that process's work:
// the control plane it hosts (ingesting the gateway's decision log, serving pulls) and collections
// of its large heap (11–36 ms each, seen landing on single samples). This process holds only the
// clients. It reads one job from BENCH_CLIENT_JOB, prints one JSON line with the samples and exits.
//   pair: the same tools/call with the same arguments, direct and through the hop, interleaved
//         one by one on warm connections; with the hop's CPU time per call when its pid is known.
//   list: tools/list through the gateway, as a bare HTTP round trip and through the MCP SDK client.
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { processCpuMs } from './client-process.ts';

/** Where a client connects: a streamable HTTP URL with a bearer key, or a program it starts on stdio. */
export type Endpoint = { url: string; key?: string } | { command: string; args: string[]; cwd?: string; env?: Record<string, string> };

export type ClientJob =
  | {
      kind: 'pair';
      direct: Endpoint;
      via: Endpoint;
      directTool: string;
      viaTool: string;
      args: Record<string, unknown>;
      warmup: number;
      calls: number;
      /** The hop's process, for its CPU time; a stdio hop is the process this client starts. */
      hopPid?: number;
    }
  | { kind: 'list'; url: string; key: string; tools: number; warmup: number; samples: number };

export type PairResult = { direct: number[]; via: number[]; cpu?: { user: number; system: number }; load: [number, number] };
export type ListResult = { bare: number[]; sdk: number[]; listed: number };

const job = JSON.parse(process.env.BENCH_CLIENT_JOB ?? '') as ClientJob;
// The SDK's HTTP client leaves an abort listener per request until collection; its warning is noise here.
process.removeAllListeners('warning');
const result = job.kind === 'pair' ? await pair(job) : await list(job);
// Exit once the line is written: a pipe takes only so much at once, and exiting drops the rest.
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));

async function connect(name: string, at: Endpoint): Promise<{ client: Client; pid: number | null }> {
  const client = new Client({ name, version: '1' });
  let transport: Transport;
  let stdio: StdioClientTransport | undefined;
  if ('url' in at) {
    const headers: Record<string, string> = at.key ? { authorization: `Bearer ${at.key}` } : {};
    transport = new StreamableHTTPClientTransport(new URL(at.url), { requestInit: { headers } });
  } else {
    stdio = new StdioClientTransport({ command: at.command, args: at.args, cwd: at.cwd, env: at.env, stderr: 'ignore' });
    transport = stdio;
  }
  await client.connect(transport);
  return { client, pid: stdio?.pid ?? null };
}

async function pair(j: Extract<ClientJob, { kind: 'pair' }>): Promise<PairResult> {
  const direct = await connect('bench-direct', j.direct);
  const via = await connect('bench-via', j.via);
  const call = async (c: Client, name: string) => {
    const r = await c.callTool({ name, arguments: j.args });
    if (r.isError) throw new Error(`call of ${name} failed: ${JSON.stringify(r)}`);
  };
  // A gateway on stdio answers tools/list once its upstream is connected and its bundle loaded.
  for (let i = 0; i < 600; i++) {
    const listed = await via.client.listTools();
    if (listed.tools.some((t) => t.name === j.viaTool)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  for (let i = 0; i < j.warmup; i++) {
    await call(direct.client, j.directTool);
    await call(via.client, j.viaTool);
  }
  const hopPid = j.hopPid ?? via.pid ?? undefined;
  const d: number[] = [];
  const g: number[] = [];
  const load0 = loadavg()[0];
  const cpu0 = processCpuMs(hopPid);
  for (let i = 0; i < j.calls; i++) {
    let t = performance.now();
    await call(direct.client, j.directTool);
    d.push(performance.now() - t);
    t = performance.now();
    await call(via.client, j.viaTool);
    g.push(performance.now() - t);
  }
  const cpu1 = processCpuMs(hopPid);
  const load: [number, number] = [load0, loadavg()[0]];
  await Promise.all([direct.client.close(), via.client.close()]);
  const cpu = hopPid === undefined ? undefined : { user: (cpu1.user - cpu0.user) / j.calls, system: (cpu1.system - cpu0.system) / j.calls };
  return { direct: d, via: g, cpu, load };
}

async function list(j: Extract<ClientJob, { kind: 'list' }>): Promise<ListResult> {
  const { client } = await connect('bench-list', { url: j.url, key: j.key });
  const sid = (client.transport as StreamableHTTPClientTransport).sessionId!;
  // The gateway answers in pages: one sample is the whole list, every page followed.
  const bare: number[] = [];
  for (let i = 0; i < j.warmup + j.samples; i++) {
    const t = performance.now();
    let count = 0;
    let cursor: string | undefined;
    do {
      const res = await fetch(j.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${j.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sid,
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) }),
      });
      const body = (await res.json()) as { result: { tools: unknown[]; nextCursor?: string } };
      count += body.result.tools.length;
      cursor = body.result.nextCursor;
    } while (cursor !== undefined);
    if (i >= j.warmup) bare.push(performance.now() - t);
    if (count !== j.tools) throw new Error(`tools/list listed ${count} tools, not ${j.tools}`);
  }
  const sdk: number[] = [];
  let listed = 0;
  for (let i = 0; i < j.warmup + j.samples; i++) {
    const t = performance.now();
    listed = 0;
    let cursor: string | undefined;
    do {
      const r = await client.listTools(cursor === undefined ? undefined : { cursor });
      listed += r.tools.length;
      cursor = r.nextCursor;
    } while (cursor !== undefined);
    if (i >= j.warmup) sdk.push(performance.now() - t);
  }
  await client.close();
  return { bare, sdk, listed };
}
