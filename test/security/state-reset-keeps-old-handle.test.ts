import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/gateway.ts';
import { type HttpListener, startHttpListener } from '../../gateway/http-listener.ts';
import { createGatewayMetrics } from '../../gateway/metrics.ts';
import { StateHandles } from '../../gateway/state-handles.ts';
import type { Bundle, BundleTool } from '../../policy-schemas/types.gen.ts';
import type { UpstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { mcpBundle } from '../gateway/mcp-bundle.ts';
import { scriptedClient, scriptedGateway } from '../gateway/scripted-gateway.ts';

// The attack: with MCP 2026-07-28 the workflow state travels in signed handles. A call that moves
// the state back to where a client starts (reset-workflow → undefined) must answer a handle too;
// otherwise the client's last handle (analysis) is the one it keeps presenting, and the reset
// leaves it in the state it was meant to leave, with that state's tools.
const here = dirname(fileURLToPath(import.meta.url));
const demo = JSON.parse(readFileSync(join(here, '..', '..', 'server', 'seed', 'demo-data.json'), 'utf8')) as {
  tools: Array<{ id: string; description: string; inputSchema: Record<string, unknown>; state?: string; availableInStates?: string[] }>;
  states: Array<{ name: string; description: string }>;
};
const seed = ['core__knowledge-query', 'core__complex-analysis', 'core__reset-workflow'].map((id) => demo.tools.find((t) => t.id === id)!);
const upstream: UpstreamFixtureState = {
  tools: seed.map((t) => ({ name: t.id.slice('core__'.length), description: t.description, inputSchema: t.inputSchema })),
};
const KEY = 'state-reset-client-0123456789';
const V = '2026-07-28';

function bundle(): Bundle {
  const b = mcpBundle('state-reset', 1, 'rec', upstream);
  b.catalog.states = demo.states;
  for (const t of seed) {
    const tool = b.catalog.tools.find((x) => x.id === `mcp__rec__${t.id.slice('core__'.length)}`) as BundleTool;
    if (t.state !== undefined) tool.state = t.state;
    if (t.availableInStates !== undefined) tool.availableInStates = t.availableInStates;
  }
  return b;
}

let listener: HttpListener;
let gateway: Gateway;
const calls: string[] = [];

beforeAll(async () => {
  ({ gateway } = scriptedGateway(bundle(), upstream, (name) => {
    calls.push(name);
    return { ok: true, result: { content: [{ type: 'text', text: `${name} done` }] } };
  }));
  listener = await startHttpListener({
    listen: { kind: 'http', host: '127.0.0.1', port: 0, path: '/mcp', allowedOrigins: [] },
    clients: [{ ...scriptedClient(createHash('sha256').update(KEY).digest()), name: 'a' }],
    metricsKeyDigest: null,
    gateway,
    metrics: createGatewayMetrics(),
    health: () => ({ status: 'ok' }),
    stateHandles: new StateHandles(randomBytes(32), 'state-reset'),
  });
});
afterAll(async () => {
  await listener?.close();
  gateway?.close();
});

async function call(name: string, args: Record<string, unknown>, state?: string) {
  const params = {
    name,
    arguments: args,
    _meta: { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {}, ...(state ? { toolgate: { state } } : {}) },
  };
  const r = await fetch(listener.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
  });
  const body = (await r.json()) as { result: { isError?: boolean; _meta: { toolgate: { state?: string; errorCode?: string } } } };
  return body.result;
}

describe('state reset over stateless requests', () => {
  it('answers a handle for the initial state when a call moves back to it, so the client leaves the old state', async () => {
    const query = await call('mcp__rec__knowledge-query', { query: 'graphs' });
    const analysis = query._meta.toolgate.state;
    expect(analysis).toMatch(/^tgs1\./);
    const reset = await call('mcp__rec__reset-workflow', { reason: 'start over' }, analysis);
    expect(reset.isError).toBeFalsy();
    const after = reset._meta.toolgate.state;
    // The reset answers the state it moved to; presenting it, the analysis tools are gone.
    expect(after).toMatch(/^tgs1\./);
    expect(after).not.toBe(analysis);
    const before = calls.length;
    const refused = await call('mcp__rec__complex-analysis', { dataset: 'ds-1', method: 'summary' }, after);
    expect(refused.isError).toBe(true);
    expect(refused._meta.toolgate.errorCode).toBe('policy_denied');
    expect(calls.length).toBe(before);
  });
});
