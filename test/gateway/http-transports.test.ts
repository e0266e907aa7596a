import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/gateway.ts';
import { FailureLimiter } from '../../gateway/client-keys.ts';
import { type HttpListener, startHttpListener } from '../../gateway/http-listener.ts';
import { createGatewayMetrics } from '../../gateway/metrics.ts';
import { Upstream } from '../../gateway/upstream.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { freePort } from '../support/free-port.ts';
import { eventually } from './gateway-process.ts';
import { initializeRequest, postInitialize } from './era-clients.ts';
import { mcpBundle } from './mcp-bundle.ts';
import { listenOver, scriptedClient, scriptedGateway } from './scripted-gateway.ts';

// The gateway's own streamable HTTP transports: the session side the clients talk to (every
// refusal the protocol defines, JSON and SSE answers, the notification stream), and the upstream
// side, against the fixture MCP server serving streamable HTTP as its own process.
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, '..', 'fixtures', 'mcp', 'gateway-upstream.ts');
const KEY = 'transport-test-key-0123456789';
const VERSION = '2025-06-18';

describe("the gateway's client-facing HTTP transport", () => {
  let listener: HttpListener;
  let gateway: Gateway;
  const upstreamCalls: string[] = [];

  beforeAll(async () => {
    const state = upstreamFixtureState();
    ({ gateway } = scriptedGateway(mcpBundle('transport', 1, 'rec', state), state, (name, args) => {
      upstreamCalls.push(name);
      return { ok: true, result: { content: [{ type: 'text', text: `echo: ${(args.text as string | undefined) ?? ''}` }] } };
    }));
    listener = await listenOver(gateway, { bot: KEY });
  });

  afterAll(async () => {
    await listener?.close();
    gateway?.close();
  });

  const headers = (sid?: string, extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${KEY}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': VERSION } : {}),
    ...extra,
  });
  const post = (body: unknown, sid?: string, extra: Record<string, string> = {}) =>
    fetch(listener.url, { method: 'POST', headers: headers(sid, extra), body: typeof body === 'string' ? body : JSON.stringify(body) });

  async function open(elicitation = false): Promise<string> {
    const r = await post(initializeRequest(VERSION, elicitation ? { elicitation: {} } : {}));
    expect(r.status).toBe(200);
    const sid = r.headers.get('mcp-session-id')!;
    await r.text();
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid)).status).toBe(202);
    return sid;
  }

  const callTool = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'mcp__rec__echo', arguments: { text: `n${id}` } } });

  it('answers a call with one JSON body, and a batch of calls with one JSON array in request order', async () => {
    const sid = await open();
    const one = await post(callTool(1), sid);
    expect(one.headers.get('content-type')).toBe('application/json');
    expect(one.headers.get('mcp-session-id')).toBe(sid);
    const body = await one.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'echo: n1' }] } });
    const batch = await (await post([callTool(2), callTool(3)], sid)).json();
    expect(batch.map((m: { id: number }) => m.id)).toEqual([2, 3]);
    expect(batch[1].result.content[0].text).toBe('echo: n3');
  });

  it('answers over SSE for a client that can be asked for approval', async () => {
    const sid = await open(true);
    const r = await post(callTool(7), sid);
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    const text = await r.text();
    expect(text).toMatch(/^event: message\ndata: /);
    expect(JSON.parse(text.split('data: ')[1])).toMatchObject({ id: 7, result: { content: [{ text: 'echo: n7' }] } });
  });

  it('answers tools/list and tools/call alike whether or not the request carries what only the SDK server handles', async () => {
    const sid = await open();
    const answer = async (body: unknown) => (await post(body, sid)).json();
    // A progress token (or any unusual field) sends the request through the SDK server; a plain one does not.
    const plain = await answer({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const viaSdk = await answer({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: { progressToken: 'p' } } });
    expect(plain.result.tools.length).toBeGreaterThan(0);
    expect(viaSdk.result).toEqual(plain.result);
    // A cursor the gateway did not give is invalid params on either path (MCP pagination).
    expect((await answer({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 'x' } })).error).toMatchObject({ code: -32602 });
    expect((await answer({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 'x', _meta: { progressToken: 'p' } } })).error).toMatchObject({
      code: -32602,
    });

    const call = await answer(callTool(4));
    const callViaSdk = await answer({ ...callTool(5), params: { ...callTool(5).params, _meta: { progressToken: 5 } } });
    expect(callViaSdk.result.content).toEqual([{ type: 'text', text: 'echo: n5' }]);
    expect(Object.keys(callViaSdk.result._meta.toolgate).sort()).toEqual(Object.keys(call.result._meta.toolgate).sort());

    // Bad params get the SDK's JSON-RPC error, and never reach the upstream.
    const before = upstreamCalls.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 5 }, 'name'],
      [{ name: 'mcp__rec__echo', arguments: [] }, 'arguments'],
      [{ arguments: {} }, 'name'],
    ];
    for (const [params, field] of cases) {
      const bad = await answer({ jsonrpc: '2.0', id: 6, method: 'tools/call', params });
      expect(bad.result).toBeUndefined();
      expect(bad.error.code).toBe(-32603);
      expect(JSON.parse(bad.error.message)[0].path).toEqual(['params', field]);
    }
    expect(upstreamCalls.length).toBe(before);
    // A message the JSON-RPC schema refuses (an extra member, a fractional id) is refused as a whole.
    expect((await post({ ...callTool(7), extra: 1 }, sid)).status).toBe(400);
    expect((await post({ ...callTool(7), id: 1.5 }, sid)).status).toBe(400);
    expect(upstreamCalls.length).toBe(before);
  });

  it('refuses what the streamable HTTP protocol refuses, and never reaches the upstream for it', async () => {
    const sid = await open();
    const before = upstreamCalls.length;
    const status = async (r: Promise<Response>) => {
      const res = await r;
      const body = await res.json().catch(() => null);
      return { status: res.status, code: body?.error?.code as number | undefined, allow: res.headers.get('allow') };
    };
    expect(await status(post(callTool(1), sid, { accept: 'application/json' }))).toMatchObject({ status: 406, code: -32000 });
    expect(await status(post(callTool(1), sid, { 'content-type': 'text/plain' }))).toMatchObject({ status: 415 });
    expect(await status(post({ jsonrpc: '2.0', id: 1, params: {} }, sid))).toMatchObject({ status: 400, code: -32700 });
    expect(
      await status(
        post(
          Array.from({ length: 101 }, (_, i) => callTool(i)),
          sid,
        ),
      ),
    ).toMatchObject({ status: 400, code: -32600 });
    expect(await status(post(callTool(1), sid, { 'mcp-protocol-version': '1999-01-01' }))).toMatchObject({ status: 400, code: -32000 });
    expect(await status(post(initializeRequest(VERSION, {}, 9), sid))).toMatchObject({ status: 400, code: -32600 });
    const put = fetch(listener.url, { method: 'PUT', headers: headers(sid), body: '{}' });
    expect(await status(put)).toMatchObject({ status: 405, allow: 'GET, POST, DELETE' });
    expect(upstreamCalls.length).toBe(before);
  });

  it('keeps one notification stream per session, and ends the session on DELETE', async () => {
    const sid = await open();
    const stream = await fetch(listener.url, { headers: headers(sid, { accept: 'text/event-stream' }) });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    const second = await fetch(listener.url, { headers: headers(sid, { accept: 'text/event-stream' }) });
    expect(second.status).toBe(409);
    await second.text();
    const noAccept = await fetch(listener.url, { headers: headers(sid, { accept: 'application/json' }) });
    expect(noAccept.status).toBe(406);
    await noAccept.text();

    const sessions = gateway.sessionCount();
    const del = await fetch(listener.url, { method: 'DELETE', headers: headers(sid) });
    expect(del.status).toBe(200);
    // The open stream ends with the session.
    await stream.text();
    expect(gateway.sessionCount()).toBe(sessions - 1);
    const after = await post(callTool(1), sid);
    expect(after.status).toBe(404);
    await after.text();
  });
});

describe('an upstream over streamable HTTP', () => {
  let dir: string;
  let stateFile: string;
  let port: number;
  let child: ChildProcess | undefined;
  let upstream: Upstream;

  function startFixture(): Promise<void> {
    const proc = spawnFixture(stateFile, port);
    child = proc;
    return listening(proc);
  }

  const killFixture = () => killGroup(child);

  function writeState(state: unknown): void {
    writeFileSync(`${stateFile}.tmp`, JSON.stringify(state));
    renameSync(`${stateFile}.tmp`, stateFile);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-http-upstream-'));
    stateFile = join(dir, 'state.json');
    writeState(upstreamFixtureState());
    port = await freePort();
    await startFixture();
    upstream = new Upstream(
      'web',
      { kind: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: { 'x-test': 'yes' } },
      { backoff: { initialMs: 100, maxMs: 300 } },
    );
    await upstream.start();
  });

  afterAll(async () => {
    await upstream?.close();
    killFixture();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects, pins what it offers, answers calls, and follows its tools/list_changed', async () => {
    expect(upstream.status()).toMatchObject({ state: 'ready', tools: upstreamFixtureState().tools.length });
    const echo = upstreamFixtureState().tools.find((t) => t.name === 'echo')!;
    expect(upstream.definitionHashOf('echo')).toBe(definitionHash(echo));
    const answer = await upstream.call('echo', { text: 'over http' }, 2000);
    expect(answer).toMatchObject({ ok: true, result: { content: [{ type: 'text', text: 'echo: over http' }] } });

    // The fixture announces the change on its notification stream; the upstream re-lists.
    const changed = new Promise<void>((resolve) => upstream.once('change', resolve));
    writeState(upstreamFixtureState({ echo: 'Echoes the text back, and now something else.' }));
    await changed;
    expect(upstream.definitionHashOf('echo')).not.toBe(definitionHash(echo));
  });

  it('answers upstream_unavailable while the server is gone, and reconnects when it is back', async () => {
    killFixture();
    const answer = await upstream.call('echo', { text: 'x' }, 2000);
    expect(answer).toMatchObject({ ok: false, code: 'upstream_unavailable' });
    await eventually(() => (upstream.status().state === 'down' ? true : undefined), 10_000, 'the upstream to be down');
    await startFixture();
    await eventually(() => (upstream.isReady() ? true : undefined), 20_000, 'the upstream to reconnect');
    expect(await upstream.call('echo', { text: 'back' }, 2000)).toMatchObject({ ok: true });
  });
});

describe("the gateway's /metrics", () => {
  it('answers 401 to a wrong metrics key and rate limits the address, on an allowance apart from the client keys', async () => {
    const state = upstreamFixtureState();
    const { gateway } = scriptedGateway(mcpBundle('metrics', 1, 'rec', state), state, () => ({ ok: false, code: 'upstream_unavailable', message: 'unused' }));
    const listener = await startHttpListener({
      listen: { kind: 'http', host: '127.0.0.1', port: 0, path: '/mcp', allowedOrigins: [] },
      clients: [scriptedClient(createHash('sha256').update(KEY).digest())],
      metricsKeyDigest: createHash('sha256').update('metrics-key-0123456789').digest(),
      gateway,
      metrics: createGatewayMetrics(),
      health: () => ({ status: 'ok' }),
      metricsLimiter: new FailureLimiter(3),
    });
    try {
      const metrics = (key: string) => fetch(`http://127.0.0.1:${listener.port}/metrics`, { headers: { authorization: `Bearer ${key}` } });
      expect((await metrics('metrics-key-0123456789')).status).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await metrics(`wrong-key-${i}-0123456789`)).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      // Out of allowance, the right key waits too, as a client key would.
      const right = await metrics('metrics-key-0123456789');
      expect(right.status).toBe(429);
      expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
      // A scraper with a stale key does not lock the MCP clients on the same address out.
      const mcp = await postInitialize(`http://127.0.0.1:${listener.port}/mcp`, KEY, {}, VERSION);
      expect(mcp.status).toBe(200);
    } finally {
      await listener.close();
      gateway.close();
    }
  });
});

describe('an upstream over streamable HTTP that answers plain JSON', () => {
  it('answers calls, and a refused POST is upstream_unavailable, not a crash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-http-upstream-json-'));
    const stateFile = join(dir, 'state.json');
    writeFileSync(stateFile, JSON.stringify(upstreamFixtureState()));
    const port = await freePort();
    const child = spawnFixture(stateFile, port, 'json');
    const upstream = new Upstream('web', { kind: 'http', url: `http://127.0.0.1:${port}/mcp` }, {});
    // A path the fixture does not serve MCP on answers 404 to every POST.
    const wrongPath = new Upstream('nowhere', { kind: 'http', url: `http://127.0.0.1:${port}/elsewhere?x=1` }, {});
    try {
      await listening(child);
      await upstream.start();
      expect(upstream.isReady()).toBe(true);
      expect(await upstream.call('echo', { text: 'json' }, 2000)).toMatchObject({ ok: true, result: { content: [{ text: 'echo: json' }] } });
      await wrongPath.start();
      expect(wrongPath.status().state).toBe('down');
      expect(await wrongPath.call('echo', { text: 'x' }, 2000)).toMatchObject({ ok: false, code: 'upstream_unavailable' });
    } finally {
      await upstream.close();
      await wrongPath.close();
      killGroup(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function spawnFixture(stateFile: string, port: number, mode?: 'json'): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', FIXTURE, stateFile, '-', String(port), ...(mode ? [mode] : [])], {
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
}

function listening(proc: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (c) => String(c).includes('listening') && resolve());
    proc.once('exit', (code) => reject(new Error(`the fixture exited with ${code}`)));
  });
}

function killGroup(child: ChildProcess | undefined): void {
  try {
    process.kill(-child!.pid!, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
