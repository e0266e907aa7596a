import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, LoggingMessageNotification, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/gateway.ts';
import type { HttpListener } from '../../gateway/http-listener.ts';
import { Upstream } from '../../gateway/upstream.ts';
import type { Bundle, BundleTool } from '../../policy-schemas/types.gen.ts';
import { type UpstreamFixtureState, fixtureTool } from '../fixtures/mcp/gateway-upstream.ts';
import { freePort } from '../support/free-port.ts';
import { mcpBundle } from './mcp-bundle.ts';
import { gatewayHolding, listenOver } from './scripted-gateway.ts';

// Issue 31.7: the MCP conformance suite's server scenarios (tools-call-with-progress,
// progress-notifications, tools-call-with-logging, server-sse-polling, tools-call-sampling,
// tools-call-elicitation), run through the gateway against an upstream whose tools behave as the
// suite's reference server's do, with the official SDK client on the other side. The suite
// itself needs Node 22; these are its scenarios as the project's own tests.
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, '..', 'fixtures', 'mcp', 'gateway-upstream.ts');
const KEY = 'conformance-client-key-0123456789';
const state: UpstreamFixtureState = {
  tools: [fixtureTool('progress'), fixtureTool('logging'), fixtureTool('reconnect'), fixtureTool('sampling'), fixtureTool('elicit'), fixtureTool('echo')],
};

let dir: string;
let child: ChildProcess;
let upstream: Upstream;
let gateway: Gateway;
let listener: HttpListener;
const failures: string[] = [];
let held: Bundle;
let hold: (b: Bundle) => void;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-conformance-'));
  const stateFile = join(dir, 'state.json');
  writeFileSync(stateFile, JSON.stringify(state));
  const port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, stateFile, '-', String(port)], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c) => String(c).includes('listening') && resolve());
    child.once('exit', (code) => reject(new Error(`the fixture exited with ${code}`)));
  });
  upstream = new Upstream('web', { kind: 'http', url: `http://127.0.0.1:${port}/mcp` }, { onFailure: (_id, m) => failures.push(m) });
  await upstream.start();
  held = mcpBundle('conformance', 1, 'web', state);
  ({ gateway, hold } = gatewayHolding(held, new Map([['web', upstream]]), 10_000));
  listener = await listenOver(gateway, { bot: KEY });
});

afterAll(async () => {
  await listener?.close();
  gateway?.close();
  await upstream?.close();
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // Already gone.
  }
  rmSync(dir, { recursive: true, force: true });
});

type Connected = { client: Client; logs: LoggingMessageNotification['params'][]; asked: Array<{ method: string; params: Record<string, unknown> }> };

/** The official SDK client of the 2025-11-25 era, declaring sampling and elicitation when told to. */
async function connect(opts: { canBeAsked: boolean }): Promise<Connected> {
  const client = new Client({ name: 'conformance-client', version: '1' }, { capabilities: opts.canBeAsked ? { sampling: {}, elicitation: { form: {} } } : {} });
  const logs: Connected['logs'] = [];
  const asked: Connected['asked'] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  if (opts.canBeAsked) {
    client.setRequestHandler(CreateMessageRequestSchema, (req) => {
      asked.push({ method: req.method, params: req.params as never });
      return { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'test-model' };
    });
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push({ method: req.method, params: req.params as never });
      return { action: 'accept', content: { colour: 'blue' } };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(listener.url), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }));
  return { client, logs, asked };
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('the conformance scenarios through the gateway (2025-11-25, HTTP upstream)', () => {
  it('tools-call-with-progress: the client’s progress token reaches the upstream, and its progress comes back under that token', async () => {
    const { client } = await connect({ canBeAsked: false });
    const seen: Progress[] = [];
    const r = (await client.callTool({ name: 'mcp__web__progress', arguments: {} }, undefined, { onprogress: (p) => void seen.push(p) })) as CallToolResult;
    expect(textOf(r)).toBe('progress done');
    expect(seen.map((p) => p.progress)).toEqual([0, 50, 100]);
    expect(seen.every((p) => p.total === 100)).toBe(true);
    await client.close();
  });

  it('progress-notifications: a call without a progress token gets none, and the stray token-0 progress never drops the upstream', async () => {
    const { client } = await connect({ canBeAsked: false });
    const restarts = upstream.status().restarts;
    const progress: unknown[] = [];
    client.fallbackNotificationHandler = async (n) => void (n.method === 'notifications/progress' && progress.push(n));
    // The upstream reports under token 0, which it was never given: one stray message per step.
    const first = (await client.callTool({ name: 'mcp__web__progress', arguments: {} })) as CallToolResult;
    expect(first.isError).toBeFalsy();
    expect(textOf(first)).toBe('progress done');
    // The call after it goes through on the same connection: nothing was taken for "not MCP".
    const next = (await client.callTool({ name: 'mcp__web__echo', arguments: {} })) as CallToolResult;
    expect(next.isError).toBeFalsy();
    expect(progress).toEqual([]);
    expect(upstream.status()).toMatchObject({ state: 'ready', restarts });
    expect(failures).toEqual([]);
    await client.close();
  });

  it('tools-call-with-logging: the log messages a call sends on its stream reach its client, and only from the level it set', async () => {
    const a = await connect({ canBeAsked: false });
    const b = await connect({ canBeAsked: false });
    const r = (await a.client.callTool({ name: 'mcp__web__logging', arguments: {} })) as CallToolResult;
    expect(textOf(r)).toBe('logging done');
    expect(a.logs.map((l) => l.data)).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
    expect(a.logs.every((l) => l.level === 'info' && l.logger === 'web')).toBe(true);
    // Another client's call: nothing of it reaches the first one.
    await b.client.callTool({ name: 'mcp__web__logging', arguments: {} });
    expect(b.logs).toHaveLength(3);
    expect(a.logs).toHaveLength(3);
    // A client that asked for warnings and worse gets no info messages.
    await a.client.setLoggingLevel('warning');
    await a.client.callTool({ name: 'mcp__web__logging', arguments: {} });
    expect(a.logs).toHaveLength(3);
    await a.client.close();
    await b.client.close();
  });

  it('server-sse-polling: an upstream that closes a call’s stream early is resumed with Last-Event-ID and the call gets its result', async () => {
    const { client } = await connect({ canBeAsked: false });
    const restarts = upstream.status().restarts;
    const r = (await client.callTool({ name: 'mcp__web__reconnect', arguments: {} })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toBe('answered after the stream was closed');
    expect(upstream.status()).toMatchObject({ state: 'ready', restarts });
    await client.close();
  });

  it('tools-call-sampling and tools-call-elicitation: the upstream’s questions reach the client that made the call, marked as the upstream’s', async () => {
    const c = await connect({ canBeAsked: true });
    const sampled = (await c.client.callTool({ name: 'mcp__web__sampling', arguments: {} })) as CallToolResult;
    expect(textOf(sampled)).toBe('model said: hello');
    const elicited = (await c.client.callTool({ name: 'mcp__web__elicit', arguments: {} })) as CallToolResult;
    expect(textOf(elicited)).toBe('user said: accept {"colour":"blue"}');
    expect(c.asked.map((a) => a.method)).toEqual(['sampling/createMessage', 'elicitation/create']);
    expect(c.asked[1].params.message).toBe('The MCP server "web" asks (this is not an approval by Toolgate): Which colour?');
    await c.client.close();
  });

  it('refuses the upstream’s questions for a client that cannot answer them, and for a tool whose result text is redacted', async () => {
    const plain = await connect({ canBeAsked: false });
    const refused = (await plain.client.callTool({ name: 'mcp__web__sampling', arguments: {} })) as CallToolResult;
    expect(textOf(refused)).not.toContain('model said');
    expect(refused.isError).toBe(true);
    await plain.client.close();

    // The same client that answered above, once the tool's results may show no text.
    const next = structuredClone(held);
    const tool = next.catalog.tools.find((t) => t.id === 'mcp__web__elicit') as BundleTool;
    tool.redaction = { allow: ['structuredContent.id'] };
    held = next;
    hold(next);
    const c = await connect({ canBeAsked: true });
    await c.client.callTool({ name: 'mcp__web__elicit', arguments: {} });
    expect(c.asked).toEqual([]);
    expect(upstream.status().state).toBe('ready');
    await c.client.close();
  });
});

describe('an upstream over stdio that reports progress under a token it was never given', () => {
  it('drops the stray message, keeps the connection, and relays progress only for a call that asked for it', async () => {
    const sdir = mkdtempSync(join(tmpdir(), 'toolgate-stray-progress-'));
    const stateFile = join(sdir, 'state.json');
    writeFileSync(stateFile, JSON.stringify(state));
    const seen: string[] = [];
    const up = new Upstream(
      'loc',
      { kind: 'stdio', command: process.execPath, args: ['--import', 'tsx', FIXTURE, stateFile, '-'] },
      { onFailure: (_i, m) => seen.push(m) },
    );
    try {
      await up.start();
      expect(await up.call('progress', {}, 5000)).toMatchObject({ ok: true });
      expect(await up.call('echo', { text: 'after' }, 5000)).toMatchObject({ ok: true });
      const relayed: Array<Record<string, unknown>> = [];
      const relay = { progress: true, answers: {}, notify: (_m: string, p: Record<string, unknown>) => void relayed.push(p), request: async () => ({}) };
      expect(await up.call('progress', {}, 5000, relay)).toMatchObject({ ok: true });
      expect(relayed.map((p) => p.progress)).toEqual([0, 50, 100]);
      expect(up.status()).toMatchObject({ state: 'ready', restarts: 0 });
      expect(seen).toEqual([]);
    } finally {
      await up.close();
      rmSync(sdir, { recursive: true, force: true });
    }
  });
});
