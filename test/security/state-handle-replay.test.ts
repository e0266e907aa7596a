import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/gateway.ts';
import type { HttpListener } from '../../gateway/http-listener.ts';
import { modernMeta, postModern } from '../gateway/era-clients.ts';
import { seedWorkflow } from '../gateway/mcp-bundle.ts';
import { listenOver, scriptedGateway } from '../gateway/scripted-gateway.ts';

// The attack: with MCP 2026-07-28 the workflow state travels in signed handles that the client
// keeps. A client that held on to an earlier handle presents it again, after a call moved the
// workflow on (analysis → results withdraws complex-analysis), to get the withdrawn tool back.
const { state: upstream, bundle } = seedWorkflow(['core__knowledge-query', 'core__complex-analysis', 'core__reset-workflow']);
const KEY = 'state-replay-client-0123456789';

let listener: HttpListener;
let gateway: Gateway;
const calls: string[] = [];

beforeAll(async () => {
  ({ gateway } = scriptedGateway(bundle('state-replay', 1), upstream, (name) => {
    calls.push(name);
    return { ok: true, result: { content: [{ type: 'text', text: `${name} done` }] } };
  }));
  listener = await listenOver(gateway, { a: KEY }, 'state-replay');
});
afterAll(async () => {
  await listener?.close();
  gateway?.close();
});

type Answer = {
  result?: { isError?: boolean; tools?: Array<{ name: string }>; _meta?: { toolgate?: { state?: string } } };
  error?: { code: number; message: string; data?: { pointer?: string } };
};

async function send(method: string, params: Record<string, unknown>, state?: string): Promise<Answer> {
  const r = await postModern(listener.url, KEY, { method, params: { ...params, _meta: modernMeta(state ? { toolgate: { state } } : {}) } });
  return (await r.json()) as Answer;
}
const call = (name: string, args: Record<string, unknown>, state?: string) => send('tools/call', { name, arguments: args }, state);

describe('an earlier state handle presented again', () => {
  it('is refused once the workflow has moved on, in _meta and as the argument, and the withdrawn tool stays withdrawn', async () => {
    const analysis = (await call('mcp__rec__knowledge-query', { query: 'graphs' })).result?._meta?.toolgate?.state as string;
    // Calls that leave the state as it was answer handles of the same standing: parallel calls do not refuse each other.
    const same = (await call('mcp__rec__knowledge-query', { query: 'more' }, analysis)).result?._meta?.toolgate?.state as string;
    expect((await send('tools/list', {}, analysis)).result?.tools?.map((t) => t.name)).toContain('mcp__rec__complex-analysis');
    const results = (await call('mcp__rec__complex-analysis', { dataset: 'ds-1', method: 'summary' }, same)).result?._meta?.toolgate?.state as string;
    expect(results).toBeTypeOf('string');

    const before = calls.length;
    for (const old of [analysis, same]) {
      const replayed = await call('mcp__rec__complex-analysis', { dataset: 'ds-2', method: 'summary' }, old);
      expect(replayed.error).toMatchObject({ code: -32602, data: { pointer: '/params/_meta/toolgate/state' } });
      expect(replayed.error?.message).toMatch(/superseded/);
      const asArgument = await send('tools/call', {
        name: 'mcp__rec__complex-analysis',
        arguments: { dataset: 'ds-2', method: 'summary', toolgate_state: old },
      });
      expect(asArgument.error).toMatchObject({ code: -32602, data: { pointer: '/params/arguments/toolgate_state' } });
      expect((await send('tools/list', {}, old)).error?.message).toMatch(/superseded/);
    }
    expect(calls.length).toBe(before);
    // The newest handle still works, and lists the results state's tools only.
    const inResults = (await send('tools/list', {}, results)).result?.tools?.map((t) => t.name);
    expect(inResults).toContain('mcp__rec__reset-workflow');
    expect(inResults).not.toContain('mcp__rec__complex-analysis');
  });
});
