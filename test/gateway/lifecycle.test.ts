import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../../gateway/config.ts';
import { memoryDecisionSink } from '../../gateway/decision-sink.ts';
import { startGateway } from '../../gateway/start.ts';
import type { RunningGateway } from '../../gateway/start.ts';
import { type LiveServer, startLiveServer } from '../distribution/live-server.ts';
import { jwksOf, makeKey, signBytes, type TestKey } from '../distribution/signed-bundles.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { connectClient, eventually, runGatewayToExit } from './gateway-process.ts';
import { MCP_BUNDLE_SUBJECT, mcpBundle } from './mcp-bundle.ts';

// The gateway's life with the bundle: nothing published yet, a bundle arriving, the bundle
// expiring in the running process; the stdio listener; a configuration refused at start.
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, '..', 'fixtures', 'mcp', 'gateway-upstream.ts');
const TSX_LOADER = import.meta.resolve('tsx');
const KEY = 'lifecycle-client-key-012345';
const TENANT = 'life';

let srv: LiveServer;
let dir: string;
let signingKey: TestKey;
let runtimeToken: string;
let gateway: RunningGateway | undefined;
const state = upstreamFixtureState();

function configFor(listen: unknown): Record<string, unknown> {
  return {
    control: { url: srv.url, tenant: TENANT, token: '${LIFE_TOKEN}', jwksFile: 'jwks.json', cacheDir: 'cache' },
    listen,
    clients: [{ name: 'bot', key: KEY, subject: MCP_BUNDLE_SUBJECT }],
    upstreams: {
      rec: { kind: 'stdio', command: process.execPath, args: ['--import', TSX_LOADER, FIXTURE, join(dir, 'state.json'), join(dir, 'calls.jsonl')] },
    },
    timeouts: { callMs: 5000 },
  };
}

async function place(version: number, expiresAt?: string): Promise<void> {
  const bundle = mcpBundle(TENANT, version, 'rec', state, expiresAt ? { expiresAt } : {});
  const text = canonicalJson(bundle);
  await srv.place(TENANT, version, { text, signature: await signBytes(text, signingKey), revision: bundle.revision });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-gw-life-'));
  writeFileSync(join(dir, 'state.json'), JSON.stringify(state));
  writeFileSync(join(dir, 'calls.jsonl'), '');
  srv = await startLiveServer();
  await srv.createTenant(TENANT);
  signingKey = await makeKey('life-key');
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify(jwksOf(signingKey)));
  runtimeToken = await srv.tokenFor('runtime', [TENANT]);
});

afterAll(async () => {
  await gateway?.close();
  await srv?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** `toolgate gateway --config file` from source, as an MCP client over stdio starts it (either era's SDK transport). */
function gatewayCommand(file: string) {
  return {
    command: process.execPath,
    args: ['--import', TSX_LOADER, join(here, '..', '..', 'server', 'cli', 'main.ts'), 'gateway', '--config', file],
    env: { ...(process.env as Record<string, string>), LIFE_TOKEN: runtimeToken },
    stderr: 'ignore' as const,
  };
}

function code(r: CallToolResult): string | undefined {
  return (r._meta as { toolgate?: { errorCode?: string } } | undefined)?.toolgate?.errorCode;
}

describe('the gateway and its bundle', () => {
  it('lists nothing and refuses every call without a bundle, serves one when it arrives, and closes everything when it expires', async () => {
    writeFileSync(join(dir, 'http.json'), JSON.stringify(configFor({ http: { port: 0 } })));
    const loaded = await loadGatewayConfig(join(dir, 'http.json'), { LIFE_TOKEN: runtimeToken });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const sink = memoryDecisionSink();
    gateway = await startGateway(loaded.config, { sink });
    await eventually(() => (gateway!.health().upstreams.rec.state === 'ready' ? true : undefined), 20_000, 'the upstream');
    const c = await connectClient(gateway.url!, KEY);

    expect((await c.client.listTools()).tools).toEqual([]);
    const refused = (await c.client.callTool({ name: 'mcp__rec__echo', arguments: { text: 'x' } })) as CallToolResult;
    expect(code(refused)).toBe('policy_denied');
    expect(refused.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('no trusted policy bundle') });
    expect(sink.records.at(-1)).toMatchObject({
      tool: 'mcp__rec__echo',
      decision: 'deny',
      errorCode: 'policy_denied',
      reason: 'no_bundle',
      bundleVersion: null,
    });
    expect(gateway.health().bundle).toMatchObject({ health: 'none', enforcing: false });

    const expiresAt = new Date(Date.now() + 8_000).toISOString();
    await place(1, expiresAt);
    await eventually(() => (c.listChanged() >= 1 ? true : undefined), 10_000, 'list_changed for the first bundle');
    expect((await c.client.listTools()).tools.map((t) => t.name)).toContain('mcp__rec__echo');
    const ok = (await c.client.callTool({ name: 'mcp__rec__echo', arguments: { text: 'hi' } })) as CallToolResult;
    expect(ok.isError).toBeFalsy();

    // The running process keeps the bundle, but nothing is allowed by it after expiresAt.
    await eventually(() => (c.listChanged() >= 2 ? true : undefined), 20_000, 'list_changed at expiry');
    expect((await c.client.listTools()).tools).toEqual([]);
    const expired = (await c.client.callTool({ name: 'mcp__rec__echo', arguments: { text: 'x' } })) as CallToolResult;
    expect(code(expired)).toBe('policy_denied');
    expect(expired.content[0]).toMatchObject({ text: 'policy_denied: policy bundle expired' });
    expect(gateway.health().bundle).toMatchObject({ enforcing: false });
    await c.close();
    await gateway.close();
    gateway = undefined;
  });

  it('serves its one client over stdio', async () => {
    await place(2);
    const file = join(dir, 'stdio.json');
    writeFileSync(file, JSON.stringify(configFor({ stdio: { client: 'bot' } })));
    const client = new Client({ name: 'stdio-test', version: '1' });
    const transport = new StdioClientTransport(gatewayCommand(file));
    await client.connect(transport);
    try {
      const names = await eventually(
        async () => {
          const tools = (await client.listTools()).tools.map((t) => t.name);
          return tools.includes('mcp__rec__echo') ? tools : undefined;
        },
        20_000,
        'the bundle over stdio',
      );
      expect(names).toHaveLength(state.tools.length);
      const r = (await client.callTool({ name: 'mcp__rec__echo', arguments: { text: 'over stdio' } })) as CallToolResult;
      expect(r.content[0]).toMatchObject({ type: 'text', text: 'echo: over stdio' });
      expect(code((await client.callTool({ name: 'mcp__rec__echo', arguments: {} })) as CallToolResult)).toBe('validation');
    } finally {
      await client.close();
    }
  });

  it('serves a 2026-07-28 client over stdio too: no initialize, each request with its _meta, a forged state handle refused', async () => {
    await place(3);
    const file = join(dir, 'stdio-modern.json');
    writeFileSync(file, JSON.stringify(configFor({ stdio: { client: 'bot' } })));
    const client = new ModernClient({ name: 'stdio-modern', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const transport = new ModernStdioTransport(gatewayCommand(file));
    await client.connect(transport);
    try {
      const names = await eventually(
        async () => {
          const tools = (await client.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name);
          return tools.includes('mcp__rec__echo') ? tools : undefined;
        },
        20_000,
        'the bundle over stdio',
      );
      expect(names).toHaveLength(state.tools.length);
      const r = await client.callTool({ name: 'mcp__rec__echo', arguments: { text: 'modern stdio' } });
      expect(r.content).toEqual([{ type: 'text', text: 'echo: modern stdio' }]);
      const forged = client.listTools({ _meta: { toolgate: { state: 'tgs1.e30.AAAA' } } }, { cacheMode: 'bypass' });
      await expect(forged).rejects.toThrow(/state handle/);
    } finally {
      await client.close();
    }
  });

  it('exits 2 naming the JSON pointer of a bad configuration, without the values of the environment', async () => {
    const file = join(dir, 'bad.json');
    const bad = configFor({ http: { port: 'eighty' } }) as any;
    bad.clients[0].key = '${LIFE_KEY}';
    bad.clients.push({ name: 'bot', keySha256: createHash('sha256').update('x').digest('hex'), subject: 'agent:x' });
    writeFileSync(file, JSON.stringify(bad));
    const secret = 'life-token-value-that-must-not-appear';
    const r = await runGatewayToExit(file, { LIFE_TOKEN: secret, LIFE_KEY: 'short' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('/listen/http/port: must be integer');
    expect(r.stderr).toContain('/clients/0/key: must NOT have fewer than 16 characters');
    expect(r.stderr + r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain('short');
    const missing = await runGatewayToExit(file, {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('/control/token: names the environment variable LIFE_TOKEN, which is not set');
  });
});
