import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/gateway.ts';
import type { HttpListener } from '../../gateway/http-listener.ts';
import { modernMeta, postModern } from '../gateway/era-clients.ts';
import { seedWorkflow } from '../gateway/mcp-bundle.ts';
import { listenOver, scriptedGateway } from '../gateway/scripted-gateway.ts';

// The attack: with MCP 2026-07-28 the workflow state travels in signed handles. A call that moves
// the state back to where a client starts (reset-workflow → undefined) must answer a handle too;
// otherwise the client's last handle (analysis) is the one it keeps presenting, and the reset
// leaves it in the state it was meant to leave, with that state's tools.
const { state: upstream, bundle } = seedWorkflow(['core__knowledge-query', 'core__complex-analysis', 'core__reset-workflow']);
const KEY = 'state-reset-client-0123456789';

let listener: HttpListener;
let gateway: Gateway;
const calls: string[] = [];

beforeAll(async () => {
  ({ gateway } = scriptedGateway(bundle('state-reset', 1), upstream, (name) => {
    calls.push(name);
    return { ok: true, result: { content: [{ type: 'text', text: `${name} done` }] } };
  }));
  listener = await listenOver(gateway, { a: KEY }, 'state-reset');
});
afterAll(async () => {
  await listener?.close();
  gateway?.close();
});

async function call(name: string, args: Record<string, unknown>, state?: string) {
  const params = { name, arguments: args, _meta: modernMeta(state ? { toolgate: { state } } : {}) };
  const r = await postModern(listener.url, KEY, { method: 'tools/call', params });
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
