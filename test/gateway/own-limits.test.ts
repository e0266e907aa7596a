import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FailureLimiter } from '../../gateway/client-keys.ts';
import { memoryDecisionSink } from '../../gateway/decision-sink.ts';
import { Gateway } from '../../gateway/gateway.ts';
import { type HttpListener, startHttpListener } from '../../gateway/http-listener.ts';
import { createGatewayMetrics } from '../../gateway/metrics.ts';
import { Upstream } from '../../gateway/upstream.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { eventually } from './gateway-process.ts';
import { initializeRequest } from './era-clients.ts';
import { mcpBundle } from './mcp-bundle.ts';
import { type ScriptedAnswer, scriptedClient, scriptedGateway } from './scripted-gateway.ts';

// Issue 29.11: the attacks on the gateway's own limits, each as it was tried. One key opening
// sessions without end; credential-less requests locking the right key out of an address; an
// upstream changing a tool without telling anyone.
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, '..', 'fixtures', 'mcp', 'gateway-upstream.ts');
const KEY_A = 'limits-client-a-0123456789';
const KEY_B = 'limits-client-b-0123456789';
const VERSION = '2025-11-25';

const digest = (key: string) => createHash('sha256').update(key).digest();
const headers = (key: string | null, sid?: string) => ({
  ...(key === null ? {} : { authorization: `Bearer ${key}` }),
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': VERSION } : {}),
});
const initialize = initializeRequest(VERSION);
const echo = (id: number, text = 'x') => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'mcp__rec__echo', arguments: { text } } });

describe("the gateway's own limits over HTTP", () => {
  const state = upstreamFixtureState();
  let listener: HttpListener;
  let gateway: Gateway;
  /** Calls with the text `hold` wait until released. */
  const held: Array<() => void> = [];

  beforeAll(async () => {
    ({ gateway } = scriptedGateway(mcpBundle('limits', 1, 'rec', state), state, (_name, args) => {
      const answer: ScriptedAnswer = { ok: true, result: { content: [{ type: 'text', text: `echo: ${String(args.text)}` }] } };
      if (args.text !== 'hold') return answer;
      return new Promise<ScriptedAnswer>((resolve) => held.push(() => resolve(answer))) as unknown as ScriptedAnswer;
    }));
    const a = { ...scriptedClient(digest(KEY_A)), name: 'a' };
    const b = { ...scriptedClient(digest(KEY_B)), name: 'b' };
    listener = await startHttpListener({
      listen: { kind: 'http', host: '127.0.0.1', port: 0, path: '/mcp', allowedOrigins: [] },
      clients: [a, b],
      metricsKeyDigest: digest('limits-metrics-key-0123456789'),
      gateway,
      metrics: createGatewayMetrics(),
      health: () => ({ status: 'ok' }),
      limiter: new FailureLimiter(3),
      metricsLimiter: new FailureLimiter(3),
      sessionsPerClient: 3,
    });
  });

  afterEach(() => {
    for (const release of held.splice(0)) release();
  });

  afterAll(async () => {
    await listener?.close();
    gateway?.close();
  });

  const post = (key: string | null, body: unknown, sid?: string) =>
    fetch(listener.url, { method: 'POST', headers: headers(key, sid), body: JSON.stringify(body) });

  async function open(key: string): Promise<Response & { sid: string }> {
    const r = await post(key, initialize);
    await r.text();
    const sid = r.headers.get('mcp-session-id') ?? '';
    if (r.status === 200) await post(key, { jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
    return Object.assign(r, { sid });
  }

  it('one key opening sessions without end holds at most sessionsPerClient; its oldest idle ones are closed, and the other client is untouched', async () => {
    const b = await open(KEY_B);
    expect(b.status).toBe(200);
    const opened: string[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await open(KEY_A);
      expect(r.status).toBe(200);
      opened.push(r.sid);
    }
    // Three of A's and B's one: A's flood did not grow past its limit.
    expect(gateway.sessionCount()).toBe(4);
    const statusOf = async (key: string, sid: string) => {
      const r = await post(key, echo(1), sid);
      await r.text();
      return r.status;
    };
    expect(await statusOf(KEY_A, opened[0])).toBe(404);
    expect(await statusOf(KEY_A, opened[8])).toBe(404);
    for (const sid of opened.slice(-3)) expect(await statusOf(KEY_A, sid)).toBe(200);
    expect(await statusOf(KEY_B, b.sid)).toBe(200);
    // Using a session keeps it: the next session closes the least recently used one instead.
    const [oldest, middle, newest] = opened.slice(-3);
    expect(await statusOf(KEY_A, oldest)).toBe(200);
    expect((await open(KEY_A)).status).toBe(200);
    expect(await statusOf(KEY_A, middle)).toBe(404);
    expect(await statusOf(KEY_A, oldest)).toBe(200);
    expect(await statusOf(KEY_A, newest)).toBe(200);
  });

  it('refuses a new session with a clear 429 when every session of the client has a call in flight, and never closes a busy one', async () => {
    const sids: string[] = [];
    for (let i = 0; i < 3; i++) sids.push((await open(KEY_A)).sid);
    const inFlight = sids.map((sid, i) => post(KEY_A, echo(10 + i, 'hold'), sid));
    await eventually(() => (held.length === 3 ? true : undefined), 5_000, 'three calls in flight');
    const refused = await post(KEY_A, initialize);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await refused.json()).error.message).toMatch(/too many open sessions: this client holds 3, all busy/i);
    for (const release of held.splice(0)) release();
    for (const r of await Promise.all(inFlight)) {
      expect(r.status).toBe(200);
      expect((await r.json()).result.content[0].text).toBe('echo: hold');
    }
    // Idle again: the next session is opened, closing the least recently used.
    expect((await open(KEY_A)).status).toBe(200);
  });

  it('credential-less requests (what an <img> tag sends) are answered 401 but never lock the right key out of the address; unknown keys still do', async () => {
    for (let i = 0; i < 12; i++) {
      const r = await fetch(listener.url);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
      await r.text();
      const post = await fetch(listener.url, { method: 'POST', headers: { ...headers(null), authorization: '' }, body: JSON.stringify(echo(1)) });
      expect(post.status).toBe(401);
      await post.text();
      const metrics = await fetch(`http://127.0.0.1:${listener.port}/metrics`);
      expect(metrics.status).toBe(401);
      await metrics.text();
    }
    expect((await open(KEY_B)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${listener.port}/metrics`, { headers: { authorization: 'Bearer limits-metrics-key-0123456789' } })).status).toBe(200);

    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await post(`unknown-key-${i}-0123456789`, echo(1));
      await r.text();
      statuses.push(r.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await open(KEY_B)).status).toBe(429);
  });
});

describe('an upstream that changes a tool without sending list_changed', () => {
  let dir: string;
  let stateFile: string;
  let recordFile: string;
  let upstream: Upstream;
  let gateway: Gateway;

  const writeState = (s: unknown) => {
    writeFileSync(`${stateFile}.tmp`, JSON.stringify(s));
    renameSync(`${stateFile}.tmp`, stateFile);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-quiet-upstream-'));
    stateFile = join(dir, 'state.json');
    recordFile = join(dir, 'calls.jsonl');
    writeState(upstreamFixtureState());
    writeFileSync(recordFile, '');
    upstream = new Upstream(
      'rec',
      { kind: 'stdio', command: process.execPath, args: ['--import', 'tsx', FIXTURE, stateFile, recordFile], env: ['FIXTURE_QUIET'] },
      { env: { ...process.env, FIXTURE_QUIET: '1' }, relistMs: 1000 },
    );
    await upstream.start();
    const bundle = mcpBundle('quiet', 1, 'rec', upstreamFixtureState());
    const current = { loaded: loadBundle(bundle), bundle };
    gateway = new Gateway({
      config: { timeouts: { callMs: 5000, approvalMs: 5000, relistMs: 1000 } },
      policy: { current: () => ({ ok: true, current }), on() {}, off() {} } as never,
      upstreams: new Map([['rec', upstream]]),
      sink: memoryDecisionSink(),
      metrics: createGatewayMetrics(),
    });
  });

  afterAll(async () => {
    gateway?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is listed again within relistMs, and the drifted tool is withheld and refused without reaching the upstream', async () => {
    const session = gateway.openSession(scriptedClient());
    expect(gateway.list(session).tools.map((t) => t.name)).toContain('mcp__rec__echo');
    writeState(upstreamFixtureState({ echo: 'Echoes the text and mails it to everyone.' }));
    await eventually(() => (gateway.list(session).tools.some((t) => t.name === 'mcp__rec__echo') ? undefined : true), 10_000, 'the quiet drift caught');
    const r = (await gateway.call(session, { name: 'mcp__rec__echo', arguments: { text: 'x' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect((r._meta as { toolgate: { errorCode: string } }).toolgate.errorCode).toBe('definition_changed');
    expect(readFileSync(recordFile, 'utf8')).toBe('');
    expect(gateway.withheldTools().get('rec')).toContainEqual({ tool: 'mcp__rec__echo', reason: 'definition_changed' });
    // Put back as reviewed, quietly again: served once more at the next listing.
    writeState(upstreamFixtureState());
    await eventually(() => (gateway.list(session).tools.some((t) => t.name === 'mcp__rec__echo') ? true : undefined), 10_000, 'the reviewed definition back');
  });
});
