import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayDecisionRecord } from '../../gateway/decision-sink.ts';
import { type LiveServer, startLiveServer } from '../distribution/live-server.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { TEST_MCP_POLICY, everythingServer, memoryServer } from '../fixtures/mcp/servers.ts';
import { freePort } from '../support/free-port.ts';
import { type ConnectedClient, type GatewayProcess, connectClient, eventually, startGatewayProcess } from './gateway-process.ts';
import { postInitialize } from './era-clients.ts';

// The gateway as a real process, in front of real MCP servers from npm (everything, memory) and
// a recording, misbehaving fixture, fed by a live Toolgate server, driven by real MCP SDK clients.
const TENANT = 'acme';
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, '..', 'fixtures', 'mcp', 'gateway-upstream.ts');
const TSX_LOADER = import.meta.resolve('tsx');
const KEYS = { ops: 'ops-key-0123456789abcdef', opsNoAsk: 'ops-no-ask-key-0123456789', reader: 'reader-key-0123456789abcd' };
const METRICS_KEY = 'metrics-key-0123456789abcdef';

let srv: LiveServer;
let gw: GatewayProcess;
let dir: string;
let stateFile: string;
let recordFile: string;
const clients: ConnectedClient[] = [];
/** Every toolCallId the clients got back, to hold against the decision log. */
const seenCallIds: string[] = [];

const recTransport = () => ({ kind: 'stdio' as const, command: process.execPath, args: ['--import', TSX_LOADER, FIXTURE, stateFile, recordFile] });

async function must(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const r = await srv.api(method, path, { body, headers });
  if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${r.text}`);
  return r;
}

async function approve(id: string, patch: Record<string, unknown>): Promise<void> {
  const tool = await must('GET', `/v1/tools/${id}`);
  const approved = await must('POST', `/v1/tools/${id}/approve`, { definitionHash: tool.json.definitionHash }, { 'if-match': tool.headers.get('etag')! });
  await must('PATCH', `/v1/tools/${id}`, patch, { 'if-match': approved.headers.get('etag') ?? tool.headers.get('etag')! });
}

async function setPolicy(readerAllow: string[]): Promise<void> {
  const current = await must('GET', `/v1/tenants/${TENANT}/policy`);
  await must(
    'PUT',
    `/v1/tenants/${TENANT}/policy`,
    {
      roles: {
        // The operator's MCP client may confirm its own calls (approvals.by: client); a client that cannot be asked waits for a person.
        operator: { groups: ['default'], allow: ['mcp__*'], deny: [], requireApproval: ['state_change'], approvals: { by: 'client' } },
        reader: { groups: ['default'], allow: readerAllow, deny: ['mcp__rec__delete_all'], requireApproval: [] },
      },
      bindings: { 'agent:ops': ['operator'], 'agent:reader': ['reader'] },
      profiles: {},
      bundleTtlSeconds: 3600,
    },
    { 'if-match': current.headers.get('etag')! },
  );
}

async function publish(reason: string): Promise<number> {
  const r = await must('POST', `/v1/tenants/${TENANT}/bundles`, { reason });
  return r.json.version as number;
}

/** Replaces the fixture's state in one step, so that it never reads a half-written file. */
function writeState(state: unknown): void {
  writeFileSync(`${stateFile}.tmp`, JSON.stringify(state));
  renameSync(`${stateFile}.tmp`, stateFile);
}

function calls(): Array<{ name: string }> {
  const text = readFileSync(recordFile, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { name: string });
}

function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('');
}

async function call(c: ConnectedClient, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const r = (await c.client.callTool({ name, arguments: args })) as CallToolResult;
  const meta = (r._meta as { toolgate?: { toolCallId?: string } } | undefined)?.toolgate;
  if (meta?.toolCallId) seenCallIds.push(meta.toolCallId);
  return r;
}

function refusal(r: CallToolResult): { decision: string; errorCode: string; bundleVersion: number | null; revision: string | null; toolCallId: string } {
  expect(r.isError).toBe(true);
  return (r._meta as { toolgate: never }).toolgate;
}

async function names(c: ConnectedClient): Promise<string[]> {
  return (await c.client.listTools()).tools.map((t) => t.name).sort();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-gateway-'));
  stateFile = join(dir, 'upstream-state.json');
  recordFile = join(dir, 'upstream-calls.jsonl');
  writeFileSync(stateFile, JSON.stringify(upstreamFixtureState()));
  writeFileSync(recordFile, '');
  process.env.MEMORY_FILE_PATH = join(dir, 'memory.jsonl');

  // The server runs stdio MCP servers only from commands the operator listed; all three are node.
  srv = await startLiveServer({ settings: { mcpCommands: TEST_MCP_POLICY.commands } });
  await srv.createTenant(TENANT);
  await must('POST', '/v1/states', { name: 'cleaned', description: 'after delete_all' });
  await must('POST', '/v1/mcp-servers', { id: 'rec', label: 'Recording fixture', transport: recTransport() });
  await must('POST', '/v1/mcp-servers', { id: 'everything', label: 'Everything', transport: everythingServer() });
  await must('POST', '/v1/mcp-servers', { id: 'memory', label: 'Memory', transport: { ...memoryServer(), env: ['MEMORY_FILE_PATH'] } });
  for (const id of ['rec', 'everything', 'memory']) await must('POST', `/v1/mcp-servers/${id}/sync`);

  const text = { effect: 'read_only', redaction: { allow: ['content[].text'] } };
  await approve('mcp__rec__echo', { effect: 'read_only', redaction: { allow: ['content[].text', 'structuredContent.text'] } });
  await approve('mcp__rec__delete_all', { effect: 'state_change', state: 'cleaned', redaction: { allow: ['content[].text'] } });
  await approve('mcp__rec__big', { ...text, availableInStates: ['cleaned'] });
  for (const t of ['crash', 'hang', 'flood', 'garbage', 'wrong_shape']) await approve(`mcp__rec__${t}`, text);
  await approve('mcp__everything__echo', text);
  await approve('mcp__memory__read_graph', text);
  await setPolicy(['mcp__everything__echo', 'mcp__rec__echo']);
  await publish('gateway test: first bundle');

  const jwks = await must('GET', '/.well-known/jwks.json');
  writeFileSync(join(dir, 'jwks.json'), jwks.text);
  const runtimeToken = await srv.tokenFor('runtime', [TENANT]);
  const port = await freePort();
  const config = {
    control: { url: srv.url, tenant: TENANT, token: '${GW_TEST_TOKEN}', jwksFile: 'jwks.json', cacheDir: 'cache' },
    listen: { http: { port } },
    clients: [
      { name: 'ops', key: '${GW_TEST_OPS_KEY}', subject: 'agent:ops' },
      { name: 'ops-no-ask', keySha256: createHash('sha256').update(KEYS.opsNoAsk).digest('hex'), subject: 'agent:ops' },
      { name: 'reader', key: KEYS.reader, subject: 'agent:reader' },
    ],
    upstreams: {
      rec: recTransport(),
      everything: everythingServer(),
      memory: { ...memoryServer(), env: ['MEMORY_FILE_PATH'] },
    },
    timeouts: { callMs: 5000, approvalMs: 2000 },
    metrics: { key: METRICS_KEY },
  };
  writeFileSync(join(dir, 'gateway.json'), JSON.stringify(config, null, 2));
  gw = await startGatewayProcess(join(dir, 'gateway.json'), port, {
    GW_TEST_TOKEN: runtimeToken,
    GW_TEST_OPS_KEY: KEYS.ops,
    MEMORY_FILE_PATH: join(dir, 'memory.jsonl'),
  });
  await eventually(
    async () => {
      const h = await gw.health();
      return h.status === 'ok' && h.bundle.health === 'fresh' ? h : undefined;
    },
    30_000,
    'a healthy gateway',
  );
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  gw?.kill();
  await srv?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function client(key: string, opts: { elicitation?: boolean } = {}): Promise<ConnectedClient> {
  const c = await connectClient(gw.url, key, opts);
  clients.push(c);
  return c;
}

describe('the gateway in front of real MCP servers', () => {
  let ops: ConnectedClient;
  let opsNoAsk: ConnectedClient;
  let reader: ConnectedClient;

  it("shows two clients with different subjects different lists, with the bundle's descriptions", async () => {
    ops = await client(KEYS.ops, { elicitation: true });
    opsNoAsk = await client(KEYS.opsNoAsk);
    reader = await client(KEYS.reader);
    expect(await names(reader)).toEqual(['mcp__everything__echo', 'mcp__rec__echo']);
    expect(await names(ops)).toEqual([
      'mcp__everything__echo',
      'mcp__memory__read_graph',
      'mcp__rec__crash',
      'mcp__rec__delete_all',
      'mcp__rec__echo',
      'mcp__rec__flood',
      'mcp__rec__garbage',
      'mcp__rec__hang',
      'mcp__rec__wrong_shape',
    ]);
    const bundle = JSON.parse((await must('GET', `/v1/tenants/${TENANT}/bundles/latest`)).text);
    const pinned = bundle.catalog.tools.find((t: { id: string }) => t.id === 'mcp__rec__echo');
    const listed = (await reader.client.listTools()).tools.find((t) => t.name === 'mcp__rec__echo')!;
    expect(listed.description).toBe(pinned.description);
    expect(listed.inputSchema).toEqual(pinned.inputSchema);
  });

  it('refuses denied, unknown, invalid-argument and approval-required calls with their codes, never reaching the upstream', async () => {
    const before = calls().length;
    const denied = refusal(await call(reader, 'mcp__rec__delete_all'));
    expect(denied).toMatchObject({ decision: 'deny', errorCode: 'policy_denied', bundleVersion: 1 });
    expect(denied.revision).toMatch(/^sha256:/);
    expect(refusal(await call(reader, 'mcp__rec__nope'))).toMatchObject({ decision: 'deny', errorCode: 'unavailable' });
    const invalid = await call(reader, 'mcp__rec__echo', { text: 5 });
    expect(refusal(invalid)).toMatchObject({ decision: 'deny', errorCode: 'validation' });
    expect(textOf(invalid)).toMatch(/^validation: .*\/text/);
    const needsApproval = await call(opsNoAsk, 'mcp__rec__delete_all');
    // A client that cannot be asked waits for a person: held for timeouts.approvalMs, then told where to decide.
    expect(refusal(needsApproval)).toMatchObject({ decision: 'require_approval', errorCode: 'approval_pending' });
    expect(textOf(needsApproval)).toMatch(/^approval_pending: .*request [0-9a-f-]{36}.*toolgate approvals approve/);
    expect(calls().length).toBe(before);
  });

  it('passes an allowed call to the upstream under its own name and redacts what comes back', async () => {
    const r = await call(reader, 'mcp__rec__echo', { text: 'hello' });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toBe('echo: hello');
    expect(r.structuredContent).toEqual({ text: 'hello' });
    expect(JSON.stringify(r)).not.toContain('upstream-secret-value');
    expect(calls().at(-1)).toEqual({ name: 'echo', arguments: { text: 'hello' } });
    expect(textOf(await call(reader, 'mcp__everything__echo', { message: 'hi' }))).toContain('hi');
    const graph = await call(ops, 'mcp__memory__read_graph');
    expect(graph.isError).toBeFalsy();
    expect(textOf(graph)).toContain('entities');
  });

  it("asks the person through elicitation: a decline refuses, an accept calls and moves the session's state", async () => {
    const before = calls().length;
    ops.answerApprovals('decline');
    expect(refusal(await call(ops, 'mcp__rec__delete_all'))).toMatchObject({ decision: 'require_approval', errorCode: 'approval_declined' });
    expect(calls().length).toBe(before);
    expect(ops.elicitations()).toBe(1);

    const changedBefore = ops.listChanged();
    ops.answerApprovals('accept');
    const r = await call(ops, 'mcp__rec__delete_all');
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toBe('deleted everything');
    expect(calls().at(-1)?.name).toBe('delete_all');
    // The session is now in state "cleaned", where mcp__rec__big is available.
    await eventually(() => (ops.listChanged() > changedBefore ? true : undefined), 15_000, 'list_changed after the state moved');
    expect(await names(ops)).toContain('mcp__rec__big');
    expect(await names(opsNoAsk)).not.toContain('mcp__rec__big');
  });

  it('withholds a tool whose upstream definition drifted from the pin, and serves it again when it matches', async () => {
    const changedBefore = reader.listChanged();
    writeState(upstreamFixtureState({ echo: 'Echoes the text and mails it to everyone.' }));
    await eventually(() => (reader.listChanged() > changedBefore ? true : undefined), 20_000, 'list_changed after drift');
    expect(await names(reader)).toEqual(['mcp__everything__echo']);
    const before = calls().length;
    expect(refusal(await call(reader, 'mcp__rec__echo', { text: 'x' }))).toMatchObject({ errorCode: 'definition_changed' });
    expect(calls().length).toBe(before);
    const health = await gw.health();
    expect(health.upstreams.rec.withheld).toContainEqual({ tool: 'mcp__rec__echo', reason: 'definition_changed' });

    writeState(upstreamFixtureState());
    await eventually(async () => ((await names(reader)).includes('mcp__rec__echo') ? true : undefined), 20_000, 'the reviewed definition back');
  });

  it('sends list_changed to a connected client when a publish changes what it may see', async () => {
    const changedBefore = reader.listChanged();
    await setPolicy(['mcp__everything__echo', 'mcp__rec__echo', 'mcp__memory__read_graph']);
    expect(await publish('reader may read the graph')).toBe(2);
    await eventually(() => (reader.listChanged() > changedBefore ? true : undefined), 15_000, 'list_changed after a publish');
    expect(await names(reader)).toEqual(['mcp__everything__echo', 'mcp__memory__read_graph', 'mcp__rec__echo']);
    const r = await call(reader, 'mcp__memory__read_graph');
    expect((r._meta as { toolgate: { bundleVersion: number } }).toolgate.bundleVersion).toBe(2);
  });

  // What the gateway logs as the cause of each: the misbehaviour itself was caught, not a timeout
  // that the fixture's "and then never answers" would also end in.
  const causes: Record<string, string> = {
    crash: 'the connection closed',
    hang: 'did not answer a call in time',
    flood: 'flooded the connection',
    garbage: 'sent something that is not MCP',
    wrong_shape: 'answered a call with something that is not a tool result',
  };
  for (const misbehaviour of Object.keys(causes)) {
    it(`answers upstream_unavailable when the upstream misbehaves (${misbehaviour}) and keeps serving`, async () => {
      const restarts = (await gw.health()).upstreams.rec.restarts as number;
      const logged = gw.stderr().length;
      const r = await call(ops, `mcp__rec__${misbehaviour}`);
      expect(refusal(r)).toMatchObject({ decision: 'allow', errorCode: 'upstream_unavailable' });
      expect(textOf(r)).toMatch(/^upstream_unavailable: /);
      if (misbehaviour !== 'hang') expect(textOf(r)).not.toContain('did not answer within');
      await eventually(
        () => (gw.stderr().slice(logged).includes(causes[misbehaviour]) ? true : undefined),
        10_000,
        `the cause logged: ${causes[misbehaviour]}`,
      );
      // Other upstreams are untouched, and the broken one comes back.
      expect(textOf(await call(reader, 'mcp__everything__echo', { message: 'still here' }))).toContain('still here');
      await eventually(
        async () => {
          const h = await gw.health();
          return h.upstreams.rec.state === 'ready' && h.upstreams.rec.restarts > restarts ? true : undefined;
        },
        60_000,
        'the upstream reconnected',
      );
      const again = await call(reader, 'mcp__rec__echo', { text: 'back' });
      expect(textOf(again)).toBe('echo: back');
    });
  }

  it('ships every call to the decision log with the bundle version and revision that decided it', async () => {
    type Logged = GatewayDecisionRecord & { runtimeId: string };
    const records = await eventually(
      async () => {
        const r = await srv.api('GET', `/v1/tenants/${TENANT}/decisions?limit=1000`);
        const items = (r.json?.items ?? []) as Logged[];
        return items.length >= seenCallIds.length ? items : undefined;
      },
      30_000,
      'decision records at the server',
    );
    expect(records.map((r) => r.toolCallId).sort()).toEqual([...seenCallIds].sort());
    expect(new Set(records.map((r) => r.runtimeId)).size).toBe(1);
    expect(records[0].runtimeId).toMatch(/^gateway:/);
    const declined = records.find((r) => r.errorCode === 'approval_declined')!;
    expect(declined).toMatchObject({ subject: 'agent:ops', tool: 'mcp__rec__delete_all', decision: 'require_approval', bundleVersion: 1 });
    expect(declined.revision).toMatch(/^sha256:/);
    expect(records.find((r) => r.tool === 'mcp__rec__delete_all' && r.subject === 'agent:reader')).toMatchObject({
      decision: 'deny',
      errorCode: 'policy_denied',
      reason: 'denied',
    });
    expect(records.find((r) => r.errorCode === undefined && r.decision === 'require_approval')).toMatchObject({
      tool: 'mcp__rec__delete_all',
      reason: 'client_confirmed',
      approval: { by: 'client' },
    });
    expect(records.find((r) => r.errorCode === 'definition_changed')).toMatchObject({ tool: 'mcp__rec__echo', decision: 'deny' });
    expect(records.filter((r) => r.bundleVersion === 2).length).toBeGreaterThan(0);
    expect(JSON.stringify(records)).not.toContain('hello');
    expect((await gw.health()).decisions).toMatchObject({ dropped: 0 });
  });

  it('reports bundle health and upstream states on /healthz, and counts calls on /metrics behind its key', async () => {
    const h = await gw.health();
    expect(h.bundle).toMatchObject({ health: 'fresh', version: 2, enforcing: true });
    expect(Object.keys(h.upstreams).sort()).toEqual(['everything', 'memory', 'rec']);
    expect(h.runtimeId).toMatch(/^gateway:/);
    expect((await fetch(`${gw.base}/metrics`)).status).toBe(401);
    const m = await fetch(`${gw.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_KEY}` } });
    expect(m.status).toBe(200);
    const text = await m.text();
    expect(text).toMatch(/toolgate_gateway_calls_total\{decision="deny",error_code="policy_denied"\} \d+/);
    expect(text).toContain('toolgate_gateway_call_duration_seconds_bucket');
    const runtimes = await must('GET', `/v1/tenants/${TENANT}/runtimes`);
    expect(JSON.stringify(runtimes.json)).toContain('gateway:');
  });

  it('serves a drifted tool again, with its new description, once an admin approves the new definition and publishes', async () => {
    const changedBefore = reader.listChanged();
    const drifted = 'Echoes the text back, now reviewed again.';
    writeState(upstreamFixtureState({ echo: drifted }));
    await eventually(() => (reader.listChanged() > changedBefore ? true : undefined), 20_000, 'list_changed after drift');
    expect(await names(reader)).not.toContain('mcp__rec__echo');

    // The admin re-syncs the server, reviews the new definition and publishes: the new pin.
    await must('POST', '/v1/mcp-servers/rec/sync');
    await approve('mcp__rec__echo', { effect: 'read_only', redaction: { allow: ['content[].text'] } });
    const version = await publish('echo reviewed again');
    await eventually(async () => ((await names(reader)).includes('mcp__rec__echo') ? true : undefined), 20_000, 'the approved definition served');
    const listed = (await reader.client.listTools()).tools.find((t) => t.name === 'mcp__rec__echo');
    expect(listed?.description).toBe(drifted);
    const r = await call(reader, 'mcp__rec__echo', { text: 'again' });
    expect(textOf(r)).toBe('echo: again');
    expect((r._meta as { toolgate: { bundleVersion: number } }).toolgate.bundleVersion).toBe(version);
  });

  it('refuses a request carrying a foreign Origin', async () => {
    const r = await postInitialize(gw.url, KEYS.reader, { origin: 'https://evil.example' }, '2025-06-18');
    expect(r.status).toBe(403);
  });

  // Last: the address is rate limited afterwards.
  it('answers 401 to a wrong key and rate limits the address after repeated failures', async () => {
    const attempt = () =>
      fetch(gw.url, {
        method: 'POST',
        headers: { authorization: 'Bearer not-a-known-key-000000', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const first = await attempt();
    expect(first.status).toBe(401);
    expect(first.headers.get('www-authenticate')).toMatch(/^Bearer/);
    let last = first;
    for (let i = 0; i < 12 && last.status !== 429; i++) last = await attempt();
    expect(last.status).toBe(429);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(gw.stderr()).not.toContain(KEYS.ops);
  });
});
