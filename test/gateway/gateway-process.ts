// `toolgate gateway --config FILE` as a real process in its own process group (upstream servers
// included), with its stderr (the log) kept.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** How a test starts the gateway: from the sources, through tsx. */
export const GATEWAY_FROM_SOURCE = ['--import', 'tsx', 'server/cli/main.ts'];
/** How `npx toolgate gateway` starts it: the compiled CLI (build it first, e.g. ensureServerBuilt). */
export const GATEWAY_BUILT = ['dist/server/main.js'];

export type GatewayProcess = {
  child: ChildProcess;
  url: string;
  base: string;
  stderr(): string;
  health(): Promise<any>;
  kill(): void;
  /** SIGTERM, a graceful shutdown (up to 10 s), then the whole process group is killed. */
  stop(): Promise<void>;
};

/** Runs the CLI; resolves with its exit code and output once it ends (for configurations that must fail). */
export function runGatewayToExit(configFile: string, env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli/main.ts', 'gateway', '--config', configFile], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    child.stderr.on('data', (c) => (stderr += String(c)));
    child.on('exit', (code) => resolve({ code, stderr, stdout }));
  });
}

/** Starts the gateway and waits until /healthz answers. */
export async function startGatewayProcess(
  configFile: string,
  port: number,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  entry: string[] = GATEWAY_FROM_SOURCE,
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [...nodeArgs, ...entry, 'gateway', '--config', configFile], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let err = '';
  child.stderr!.on('data', (c) => (err += String(c)));
  const base = `http://127.0.0.1:${port}`;
  const proc: GatewayProcess = {
    child,
    url: `${base}/mcp`,
    base,
    stderr: () => err,
    async health() {
      return (await fetch(`${base}/healthz`)).json();
    },
    kill() {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      }
      proc.kill();
    },
  };
  const end = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return proc;
    } catch {
      // Not listening yet.
    }
    if (child.exitCode !== null || Date.now() > end) {
      proc.kill();
      throw new Error(`the gateway did not start: ${err.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export type ConnectedClient = {
  client: Client;
  /** How many tools/list_changed notifications arrived. */
  listChanged(): number;
  /** What the next elicitation is answered with. */
  answerApprovals(action: 'accept' | 'decline'): void;
  elicitations(): number;
  close(): Promise<void>;
};

/** A real MCP SDK client over streamable HTTP with a bearer key; `elicitation` declares that capability. */
export async function connectClient(url: string, key: string, opts: { elicitation?: boolean } = {}): Promise<ConnectedClient> {
  const client = new Client({ name: 'gateway-test-client', version: '1' }, { capabilities: opts.elicitation ? { elicitation: { form: {} } } : {} });
  let changed = 0;
  let elicited = 0;
  let action: 'accept' | 'decline' = 'decline';
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed++;
  });
  if (opts.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, () => {
      elicited++;
      return action === 'accept' ? { action: 'accept', content: {} } : { action: 'decline' };
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return {
    client,
    listChanged: () => changed,
    answerApprovals: (a) => (action = a),
    elicitations: () => elicited,
    close: () => client.close(),
  };
}

/** Polls until `check` returns a value (not undefined), or fails after `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, ms = 20_000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
