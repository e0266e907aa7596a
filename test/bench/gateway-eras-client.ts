// The measuring MCP clients of gateway-eras.bench.ts, in a process of their own (away from the
// control plane the benchmark hosts, as a real client is). Reads one job from BENCH_CLIENT_JOB,
// prints one JSON line with the samples and exits.
//   rotation:   the same tools/call with the same arguments on several paths (direct to the
//               upstream, through the gateway, through mcp-proxy), one call on each in turn, on
//               warm connections; with each hop process's CPU time per call.
//   concurrent: N clients at once, each making M calls; errors and every call's latency.
// A path's era picks its client: `@modelcontextprotocol/sdk` 1.x for 2025-11-25 (initialize, a
// session), the 2.x `@modelcontextprotocol/client` pinned to 2026-07-28 (no initialize, no session).
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { processCpuMs } from './client-process.ts';

export type Era = '2025-11-25' | '2026-07-28';

/** Where a client connects: a streamable HTTP URL (with a bearer key) in either era, or a program it starts on stdio (2025-11-25). */
export type ErasEndpoint = { url: string; key?: string; era: Era } | { command: string; args: string[]; era: '2025-11-25' };

export type ErasPath = { label: string; at: ErasEndpoint; tool: string; hopPid?: number };

export type ErasJob =
  | { kind: 'rotation'; paths: ErasPath[]; args: Record<string, unknown>; warmup: number; calls: number }
  /** Each client signs in with its own key (`keys[i]`): a gateway client holds only so many sessions. */
  | { kind: 'concurrent'; at: Extract<ErasEndpoint, { url: string }>; keys: string[]; tool: string; args: Record<string, unknown>; callsEach: number };

export type RotationResult = { samples: Record<string, number[]>; cpu: Record<string, { user: number; system: number } | null>; load: [number, number] };
export type ConcurrentResult = { errors: number; firstError: string | null; wallMs: number; latencies: number[] };

/** What both SDK clients offer that the benchmark uses. */
type AnyClient = {
  callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<{ isError?: boolean } & Record<string, unknown>>;
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  close(): Promise<void>;
};

const job = JSON.parse(process.env.BENCH_CLIENT_JOB ?? '') as ErasJob;
// The SDK's HTTP client leaves an abort listener per request until collection; its warning is noise here.
process.removeAllListeners('warning');
const result = job.kind === 'rotation' ? await rotation(job) : await concurrent(job);
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));

async function connect(at: ErasEndpoint): Promise<AnyClient> {
  if ('command' in at) {
    const c = new LegacyClient({ name: 'bench', version: '1' });
    await c.connect(new StdioClientTransport({ command: at.command, args: at.args, stderr: 'ignore' }));
    return c as unknown as AnyClient;
  }
  const headers: Record<string, string> = at.key ? { authorization: `Bearer ${at.key}` } : {};
  if (at.era === '2026-07-28') {
    const c = new ModernClient({ name: 'bench', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await c.connect(new ModernTransport(new URL(at.url), { requestInit: { headers } }));
    return c as unknown as AnyClient;
  }
  const c = new LegacyClient({ name: 'bench', version: '1' });
  await c.connect(new LegacyTransport(new URL(at.url), { requestInit: { headers } }));
  return c as unknown as AnyClient;
}

async function call(c: AnyClient, name: string, args: Record<string, unknown>): Promise<void> {
  const r = await c.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`call of ${name} failed: ${JSON.stringify(r).slice(0, 300)}`);
}

async function rotation(j: Extract<ErasJob, { kind: 'rotation' }>): Promise<RotationResult> {
  const clients = await Promise.all(j.paths.map((p) => connect(p.at)));
  // A hop answers tools/list with the tool once its upstream is connected and its bundle loaded.
  for (const [i, p] of j.paths.entries()) {
    for (let t = 0; t < 600; t++) {
      if ((await clients[i].listTools()).tools.some((x) => x.name === p.tool)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  for (let i = 0; i < j.warmup; i++) for (const [k, p] of j.paths.entries()) await call(clients[k], p.tool, j.args);
  const samples: Record<string, number[]> = Object.fromEntries(j.paths.map((p) => [p.label, []]));
  const load0 = loadavg()[0];
  const cpu0 = j.paths.map((p) => processCpuMs(p.hopPid));
  for (let i = 0; i < j.calls; i++) {
    for (const [k, p] of j.paths.entries()) {
      const t = performance.now();
      await call(clients[k], p.tool, j.args);
      samples[p.label].push(performance.now() - t);
    }
  }
  const cpu1 = j.paths.map((p) => processCpuMs(p.hopPid));
  const cpu: RotationResult['cpu'] = {};
  for (const [k, p] of j.paths.entries()) {
    cpu[p.label] = p.hopPid === undefined ? null : { user: (cpu1[k].user - cpu0[k].user) / j.calls, system: (cpu1[k].system - cpu0[k].system) / j.calls };
  }
  const load: [number, number] = [load0, loadavg()[0]];
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  return { samples, cpu, load };
}

async function concurrent(j: Extract<ErasJob, { kind: 'concurrent' }>): Promise<ConcurrentResult> {
  const clients = await Promise.all(j.keys.map((key) => connect({ ...j.at, key })));
  let errors = 0;
  let firstError: string | null = null;
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      for (let i = 0; i < j.callsEach; i++) {
        const t = performance.now();
        try {
          await call(c, j.tool, j.args);
        } catch (err) {
          errors++;
          firstError ??= String(err).slice(0, 300);
        }
        latencies.push(performance.now() - t);
      }
    }),
  );
  const wallMs = performance.now() - t0;
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  return { errors, firstError, wallMs, latencies };
}
