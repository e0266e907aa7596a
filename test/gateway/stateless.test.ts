import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryDecisionSink } from '../../gateway/decision-sink.ts';
import { Gateway } from '../../gateway/gateway.ts';
import { type HttpListener, startHttpListener } from '../../gateway/http-listener.ts';
import { createGatewayMetrics } from '../../gateway/metrics.ts';
import { answerModernMessage, isModernMessage } from '../../gateway/modern-http.ts';
import { StateHandles } from '../../gateway/state-handles.ts';
import type { Bundle, BundleTool } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { legacyClient, MODERN_VERSION, modernClient, modernMeta, postModern } from './era-clients.ts';
import { mcpBundle, seedWorkflow } from './mcp-bundle.ts';
import { gatewayHolding, listenOver, scriptedClient, scriptedGateway } from './scripted-gateway.ts';

// MCP 2026-07-28 (stateless) beside 2025-11-25 on one gateway, chosen per request: the official
// 2.x SDK client (@modelcontextprotocol/client) and the 1.x one (@modelcontextprotocol/sdk), and
// raw HTTP for what the SDKs do not show. The workflow is seed 002's: research → analysis →
// results (server/seed/demo-data.json), its tools served by an MCP upstream named `rec`.
const SEED_TOOLS = ['core__knowledge-query', 'core__complex-analysis', 'core__reset-workflow', 'core__text-completion'];
const { state: upstreamState, bundle: seedBundleFor } = seedWorkflow(SEED_TOOLS);
const KEY_A = 'stateless-client-a-0123456789';
const KEY_B = 'stateless-client-b-0123456789';
const V = MODERN_VERSION;

/** The seed's workflow on the rec upstream's tools: each tool's states as the seed gives them. */
const seedBundle = (version: number) => seedBundleFor('stateless', version);

let listener: HttpListener;
let gateway: Gateway;
let hold: (b: Bundle) => void;
const upstreamCalls: Array<{ name: string; args: Record<string, unknown> }> = [];

beforeAll(async () => {
  ({ gateway, hold } = scriptedGateway(seedBundle(1), upstreamState, (name, args) => {
    upstreamCalls.push({ name, args });
    return { ok: true, result: { content: [{ type: 'text', text: `${name} done` }] } };
  }));
  listener = await listenOver(gateway, { a: KEY_A, b: KEY_B }, 'stateless');
});

afterAll(async () => {
  await listener?.close();
  gateway?.close();
});

const modern = (key: string) => modernClient(listener.url, key);

const names = (tools: Array<{ name: string }>) => tools.map((t) => t.name).sort();
const stateOf = (r: { _meta?: Record<string, unknown> }) => (r._meta?.toolgate as { state?: string } | undefined)?.state;
const codeOf = (r: { _meta?: Record<string, unknown> }) => (r._meta?.toolgate as { errorCode?: string } | undefined)?.errorCode;

/** A raw 2026-07-28 POST: headers mirrored from the body unless the test overrides them. */
const raw = (body: Record<string, unknown>, headers: Record<string, string | undefined> = {}, key = KEY_A) => postModern(listener.url, key, body, headers);
const meta = modernMeta;

describe('MCP 2026-07-28 through the gateway, with the 2.x SDK client', () => {
  it('moves through research → analysis → results with signed state handles, the lists following the presented state', async () => {
    const client = await modern(KEY_A);
    expect(names((await client.listTools()).tools)).toEqual(['mcp__rec__knowledge-query', 'mcp__rec__text-completion']);
    const query = await client.callTool({ name: 'mcp__rec__knowledge-query', arguments: { query: 'graphs' } });
    expect(query.isError).toBeFalsy();
    const analysis = stateOf(query);
    expect(analysis).toMatch(/^tgs1\./);

    // Presented in _meta: the analysis state's tools.
    const inAnalysis = await client.listTools({ _meta: { toolgate: { state: analysis } } });
    expect(names(inAnalysis.tools)).toEqual(['mcp__rec__complex-analysis', 'mcp__rec__reset-workflow', 'mcp__rec__text-completion']);
    // Presented as the argument the gateway adds to every listed schema, and stripped before the upstream.
    const listed = inAnalysis.tools.find((t) => t.name === 'mcp__rec__complex-analysis')!;
    expect(listed.inputSchema.properties).toHaveProperty('toolgate_state');
    const done = await client.callTool({ name: 'mcp__rec__complex-analysis', arguments: { dataset: 'ds-1', method: 'summary', toolgate_state: analysis } });
    expect(done.content).toEqual([{ type: 'text', text: 'complex-analysis done' }]);
    expect(upstreamCalls.at(-1)).toEqual({ name: 'complex-analysis', args: { dataset: 'ds-1', method: 'summary' } });
    const results = stateOf(done)!;
    expect(names((await client.listTools({ _meta: { toolgate: { state: results } } })).tools)).toEqual([
      'mcp__rec__reset-workflow',
      'mcp__rec__text-completion',
    ]);

    // Without a handle the request is in the configured state: complex-analysis is refused, the upstream never called.
    const before = upstreamCalls.length;
    const refused = await client.callTool({ name: 'mcp__rec__complex-analysis', arguments: { dataset: 'ds-1', method: 'summary' } });
    expect(refused.isError).toBe(true);
    expect(codeOf(refused)).toBe('policy_denied');
    expect(upstreamCalls.length).toBe(before);
    await client.close();
  });

  it('refuses a forged handle and another client’s handle, and a new connection resets nothing', async () => {
    const a = await modern(KEY_A);
    const analysis = stateOf(await a.callTool({ name: 'mcp__rec__knowledge-query', arguments: { query: 'x' } }))!;
    const [prefix, payload, mac] = analysis.split('.');
    const edited = JSON.parse(Buffer.from(payload, 'base64url').toString()) as unknown[];
    edited[3] = 'results';
    const forged = `${prefix}.${Buffer.from(JSON.stringify(edited)).toString('base64url')}.${mac}`;
    await expect(a.listTools({ _meta: { toolgate: { state: forged } } })).rejects.toThrow(/signature does not verify/);
    const before = upstreamCalls.length;
    await expect(a.callTool({ name: 'mcp__rec__complex-analysis', arguments: { dataset: 'd', method: 'summary', toolgate_state: forged } })).rejects.toThrow(
      /signature does not verify.*\/params\/arguments\/toolgate_state/,
    );
    const b = await modern(KEY_B);
    await expect(
      b.callTool({ name: 'mcp__rec__complex-analysis', arguments: { dataset: 'd', method: 'summary' }, _meta: { toolgate: { state: analysis } } }),
    ).rejects.toThrow(/issued to another client/);
    expect(upstreamCalls.length).toBe(before);
    await a.close();
    await b.close();

    // A new connection of the same client presents the same handle: the same state, nothing reset.
    const again = await modern(KEY_A);
    expect(names((await again.listTools({ _meta: { toolgate: { state: analysis } } })).tools)).toContain('mcp__rec__complex-analysis');
    await again.close();
  });

  it('serves the 1.x SDK client (2025-11-25, sessions) on the same endpoint at the same time', async () => {
    const legacy = await legacyClient(listener.url, KEY_B);
    expect(names((await legacy.listTools()).tools)).toEqual(['mcp__rec__knowledge-query', 'mcp__rec__text-completion']);
    await legacy.callTool({ name: 'mcp__rec__knowledge-query', arguments: { query: 'q' } });
    // The session holds the state, as before; no handle argument in its schemas.
    const tools = (await legacy.listTools()).tools;
    expect(names(tools)).toContain('mcp__rec__complex-analysis');
    expect(tools[0].inputSchema.properties).not.toHaveProperty('toolgate_state');
    await legacy.close();
  });
});

describe('MCP 2026-07-28 through the gateway, raw HTTP', () => {
  it('answers server/discover, and tools/list with cache hints short enough for a client that only polls', async () => {
    const d = await (await raw({ method: 'server/discover', params: { _meta: meta() } })).json();
    expect(d.result).toMatchObject({ resultType: 'complete', supportedVersions: expect.arrayContaining([V, '2025-11-25']), capabilities: { tools: {} } });
    const r = await raw({ method: 'tools/list', params: { _meta: meta() } });
    expect(r.headers.get('mcp-session-id')).toBeNull();
    const list = (await r.json()).result;
    // The seed's lists change with the state a request presents, which a client's cache does not key on: never cached.
    expect(list).toMatchObject({ resultType: 'complete', cacheScope: 'private', ttlMs: 0 });
    // A bundle whose lists do not depend on the state: cacheable, for less than a minute.
    hold(mcpBundle('stateless', 9, 'rec', upstreamState));
    const plain = (await (await raw({ method: 'tools/list', params: { _meta: meta() } })).json()).result;
    expect(plain.ttlMs).toBeGreaterThan(0);
    expect(plain.ttlMs).toBeLessThanOrEqual(60_000);
    // A publish is in the very next list: nothing is cached per connection or per client.
    const next = seedBundle(2);
    (next.catalog.tools.find((t) => t.id === 'mcp__rec__text-completion') as BundleTool).availableInStates = ['results'];
    hold(next);
    const after = (await (await raw({ method: 'tools/list', params: { _meta: meta() } })).json()).result;
    expect(names(after.tools)).toEqual(['mcp__rec__knowledge-query']);
    hold(seedBundle(3));
  });

  it('checks Mcp-Method, Mcp-Name and MCP-Protocol-Version against the body, and refuses them unmatched without reaching the upstream', async () => {
    const before = upstreamCalls.length;
    const call = { method: 'tools/call', params: { name: 'mcp__rec__knowledge-query', arguments: { query: 'q' }, _meta: meta() } };
    const cases: Array<[Record<string, string | undefined>, RegExp]> = [
      [{ 'mcp-method': 'tools/list' }, /Mcp-Method/],
      [{ 'mcp-method': undefined }, /Mcp-Method/],
      [{ 'mcp-name': 'mcp__rec__text-completion' }, /Mcp-Name/],
      [{ 'mcp-name': undefined }, /Mcp-Name/],
      [{ 'mcp-name': '=?base64?not base64?=' }, /Mcp-Name/],
    ];
    for (const [headers, message] of cases) {
      const r = await raw(call, headers);
      expect(r.status).toBe(400);
      const body = await r.json();
      expect(body.error.code).toBe(-32020);
      expect(body.error.message).toMatch(message);
    }
    // A base64-encoded name that matches is accepted.
    const encoded = `=?base64?${Buffer.from('mcp__rec__knowledge-query').toString('base64')}?=`;
    expect((await (await raw(call, { 'mcp-name': encoded })).json()).result.resultType).toBe('complete');
    // Header and _meta versions must agree; an unknown version is named with the supported ones.
    const mismatched = await raw(call, { 'mcp-protocol-version': '2099-01-01' });
    expect(mismatched.status).toBe(400);
    expect((await mismatched.json()).error.code).toBe(-32020);
    const unknown = await raw(
      { ...call, params: { ...call.params, _meta: meta({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) } },
      { 'mcp-protocol-version': '2099-01-01' },
    );
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error).toMatchObject({ code: -32022, data: { supported: [V], requested: '2099-01-01' } });
    expect(upstreamCalls.length).toBe(before + 1);
  });

  it('answers an unknown method 404, a missing capabilities envelope and malformed handles with errors naming the pointer', async () => {
    const nf = await raw({ method: 'prompts/list', params: { _meta: meta() } });
    expect(nf.status).toBe(404);
    expect((await nf.json()).error.code).toBe(-32601);
    const noCaps = await (await raw({ method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': V } } })).json();
    expect(noCaps.error.code).toBe(-32602);
    const bad = await (await raw({ method: 'tools/list', params: { _meta: meta({ toolgate: { state: 'garbage' } }) } })).json();
    expect(bad.error).toMatchObject({ code: -32602, data: { pointer: '/params/_meta/toolgate/state' } });
    const notString = await (await raw({ method: 'tools/list', params: { _meta: meta({ toolgate: { state: 5 } }) } })).json();
    expect(notString.error.code).toBe(-32602);
    const batch = await fetch(listener.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY_A}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
      },
      body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta() } }]),
    });
    expect(batch.status).toBe(400);
  });
});

describe('the same guarantees for a 2026-07-28 client', () => {
  it('withholds a drifted tool, never reaches the upstream for a refusal, redacts results and records every decision', async () => {
    const state = upstreamFixtureState();
    const hashes = new Map(state.tools.map((t) => [t.name, definitionHash(t)]));
    const calls: string[] = [];
    let changed = () => {};
    const upstream = {
      isReady: () => true,
      definitionHashOf: (n: string) => hashes.get(n),
      call: async (name: string) => {
        calls.push(name);
        return { ok: true, result: { content: [{ type: 'text', text: 'echo: hi' }], structuredContent: { text: 'hi', secret: 'upstream-secret-value' } } };
      },
      restartAfterTimeout: () => {},
      on: (_e: string, f: () => void) => void (changed = f),
      off: () => {},
    };
    const { gateway: gw, sink } = gatewayHolding(mcpBundle('guarantees', 1, 'rec', state), new Map([['rec', upstream]]), 1000);
    const own = await listenOver(gw, { a: KEY_A });
    try {
      const client = await modernClient(own.url, KEY_A);
      const ok = await client.callTool({ name: 'mcp__rec__echo', arguments: { text: 'hi' } });
      expect(ok.content).toEqual([{ type: 'text', text: 'echo: hi' }]);
      expect(JSON.stringify(ok)).not.toContain('upstream-secret-value');

      // The upstream's echo drifts from its pin: gone from the list, refused, the upstream not called.
      hashes.set('echo', 'sha256:drifted');
      changed();
      await new Promise((r) => setImmediate(r));
      expect(names((await client.listTools(undefined, { cacheMode: 'refresh' })).tools)).not.toContain('mcp__rec__echo');
      const refused = await client.callTool({ name: 'mcp__rec__echo', arguments: { text: 'hi' } });
      expect(codeOf(refused)).toBe('definition_changed');
      expect(calls).toEqual(['echo']);
      expect(sink.records.map((r) => [r.tool, r.decision, r.errorCode ?? null, r.bundleVersion])).toEqual([
        ['mcp__rec__echo', 'allow', null, 1],
        ['mcp__rec__echo', 'deny', 'definition_changed', 1],
      ]);
      await client.close();
    } finally {
      await own.close();
      gw.close();
    }
  });
});

describe('subscriptions/listen (2026-07-28 change notifications)', () => {
  it('acknowledges what it agreed, then says tools/list_changed when a publish changes what the client in its presented state sees', async () => {
    const state = upstreamFixtureState();
    let current = { loaded: loadBundle(mcpBundle('listen', 1, 'rec', state)), bundle: mcpBundle('listen', 1, 'rec', state) };
    const policyChanged: Array<() => void> = [];
    const hashes = new Map(state.tools.map((t) => [t.name, definitionHash(t)]));
    const upstream = { isReady: () => true, definitionHashOf: (n: string) => hashes.get(n), on() {}, off() {} };
    const gw = new Gateway({
      config: { timeouts: { callMs: 1000, approvalMs: 1000, relistMs: 60_000 } },
      policy: { current: () => ({ ok: true, current }), on: (_e: string, f: () => void) => void policyChanged.push(f), off() {} } as never,
      upstreams: new Map([['rec', upstream as never]]),
      sink: memoryDecisionSink(),
      metrics: createGatewayMetrics(),
    });
    const own = await startHttpListener({
      listen: { kind: 'http', host: '127.0.0.1', port: 0, path: '/mcp', allowedOrigins: [] },
      clients: [{ ...scriptedClient(createHash('sha256').update(KEY_A).digest()), name: 'a' }],
      metricsKeyDigest: null,
      gateway: gw,
      metrics: createGatewayMetrics(),
      health: () => ({ status: 'ok' }),
      sessionsPerClient: 1,
    });
    const headers = {
      authorization: `Bearer ${KEY_A}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': 'subscriptions/listen',
    };
    const body = (id: number, notifications: unknown) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: meta(), notifications } });
    const aborter = new AbortController();
    try {
      const noFilter = await fetch(own.url, { method: 'POST', headers, body: body(1, undefined) });
      expect((await noFilter.json()).error).toMatchObject({ code: -32602, data: { pointer: '/params/notifications' } });

      const r = await fetch(own.url, { method: 'POST', headers, body: body(7, { toolsListChanged: true, promptsListChanged: true }), signal: aborter.signal });
      expect(r.headers.get('content-type')).toBe('text/event-stream');
      const reader = r.body!.getReader();
      let text = '';
      const nextEvent = async (): Promise<Record<string, any>> => {
        for (;;) {
          const end = text.indexOf('\n\n');
          if (end >= 0) {
            const chunk = text.slice(0, end);
            text = text.slice(end + 2);
            const data = chunk.split('\n').find((l) => l.startsWith('data: '));
            if (data) return JSON.parse(data.slice(6));
            continue;
          }
          const { value, done } = await reader.read();
          if (done) throw new Error('the stream ended');
          text += new TextDecoder().decode(value);
        }
      };
      expect(await nextEvent()).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } },
      });
      // One listen stream per client here (sessionsPerClient 1): a second is refused.
      const second = await fetch(own.url, { method: 'POST', headers, body: body(8, { toolsListChanged: true }) });
      expect(second.status).toBe(429);
      await second.text();

      // A publish that hides echo from this client.
      const next = mcpBundle('listen', 2, 'rec', state);
      next.policy.roles!.analyst.deny = ['mcp__rec__echo'];
      current = { loaded: loadBundle(next), bundle: next };
      for (const f of policyChanged) f();
      expect(await nextEvent()).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } },
      });
    } finally {
      aborter.abort();
      await own.close();
      gw.close();
    }
  });
});

describe('2026-07-28 requests over stdio (one message at a time)', () => {
  it('answers discover, refuses an unknown version, a missing capabilities envelope, an unknown method and a forged handle', async () => {
    const client = { ...scriptedClient(), name: 'a' };
    const ctx = { gateway, handles: new StateHandles(randomBytes(32), 'stateless'), version: '1', instructions: 'x' };
    const ask = async (method: string, params: Record<string, unknown>) => {
      const out: Array<Record<string, any>> = [];
      await answerModernMessage(ctx, client, { jsonrpc: '2.0', id: 3, method, params }, (m) => void out.push(m));
      return out.at(-1)!;
    };
    expect((await ask('server/discover', { _meta: meta() })).result).toMatchObject({
      supportedVersions: expect.arrayContaining([V]),
      capabilities: { tools: {} },
    });
    expect((await ask('tools/list', { _meta: meta({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) })).error).toMatchObject({
      code: -32022,
      data: { supported: [V], requested: '2099-01-01' },
    });
    expect((await ask('tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': V } })).error.code).toBe(-32602);
    expect((await ask('subscriptions/listen', { _meta: meta(), notifications: {} })).error.code).toBe(-32601);
    expect((await ask('tools/list', { _meta: meta({ toolgate: { state: 'tgs1.e30.AAAA' } }) })).error).toMatchObject({
      code: -32602,
      data: { pointer: '/params/_meta/toolgate/state' },
    });
    expect((await ask('tools/list', { _meta: meta() })).result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
    expect(isModernMessage({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { _meta: meta() } })).toBe(false);
    expect(isModernMessage({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })).toBe(false);
  });
});
