import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Bundle, BundleTool } from '../../policy-schemas/types.gen.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { mcpBundle } from './mcp-bundle.ts';
import { type ScriptedAnswer as Answer, scriptedClient, scriptedGateway } from './scripted-gateway.ts';

// The enforcement core in process, against a scripted upstream: budgets, timeouts, redaction.
const state = upstreamFixtureState();
const client = scriptedClient();

function setup(edit: (b: Bundle) => void, answer: (name: string, timeoutMs: number) => Answer) {
  const bundle = mcpBundle('core', 1, 'rec', state);
  edit(bundle);
  const upstreamCalls: Array<{ name: string; timeoutMs: number }> = [];
  let restarts = 0;
  const { gateway, sink, hold } = scriptedGateway(
    bundle,
    state,
    (name, _args, timeoutMs) => {
      upstreamCalls.push({ name, timeoutMs });
      return answer(name, timeoutMs);
    },
    { onRestart: () => void restarts++ },
  );
  const session = gateway.openSession(client);
  const call = (name: string, args: Record<string, unknown> = {}) => gateway.call(session, { name, arguments: args });
  return { gateway, session, call, upstreamCalls, sink, hold, restarts: () => restarts };
}

/** The subject's calls of read-only tools need approval, which the role lets its MCP client give (`approvals.by: "client"`). */
const asksApproval = (b: Bundle) => {
  b.policy.roles!.analyst.requireApproval = ['read_only'];
  b.policy.roles!.analyst.approvals = { by: 'client' };
};

/** The session's client can be asked; while the person decides, `next` is published, then the person accepts. */
function approvedAfterPublish(t: { session: { server: unknown }; hold: (b: Bundle) => void }, next: Bundle): void {
  const server = t.session.server as { getClientCapabilities(): unknown; elicitInput(): Promise<unknown> };
  server.getClientCapabilities = () => ({ elicitation: {} });
  server.elicitInput = async () => {
    t.hold(next);
    return { action: 'accept' };
  };
}

const tool = (b: Bundle, id: string) => b.catalog.tools.find((t) => t.id === id) as BundleTool;
const codeOf = (r: CallToolResult) => (r._meta as { toolgate: { errorCode?: string } }).toolgate.errorCode;
const text = (s: string): Answer => ({ ok: true, result: { content: [{ type: 'text', text: s }] } });

describe('the gateway core', () => {
  it("withholds a result larger than the tool's maxResultBytes budget", async () => {
    const t = setup(
      (b) => (tool(b, 'mcp__rec__big').budgets = { maxResultBytes: 100 }),
      (name) => text(name === 'big' ? 'y'.repeat(500) : 'small'),
    );
    const r = await t.call('mcp__rec__big');
    expect(codeOf(r)).toBe('budget_exceeded');
    expect(JSON.stringify(r)).not.toContain('yyyy');
    expect(codeOf(await t.call('mcp__rec__echo', { text: 'a' }))).toBeUndefined();
  });

  it('counts result bytes per client and refuses, without calling the upstream, once the budget is used, whatever session asks', async () => {
    const t = setup(
      (b) => (b.policy.budgets = { maxResultBytes: 200 }),
      () => text('x'.repeat(60)),
    );
    const codes: Array<string | undefined> = [];
    for (let i = 0; i < 5; i++) codes.push(codeOf(await t.call('mcp__rec__echo', { text: 'a' })));
    expect(codes.slice(0, 2)).toEqual([undefined, undefined]);
    expect(codes.at(-1)).toBe('budget_exceeded');
    const reached = t.upstreamCalls.length;
    expect(codeOf(await t.call('mcp__rec__echo', { text: 'a' }))).toBe('budget_exceeded');
    expect(t.upstreamCalls.length).toBe(reached);
    // Budgets are the client's: a new session of the same client resets nothing; another client has its own.
    const again = t.gateway.openSession(client);
    expect(codeOf(await t.gateway.call(again, { name: 'mcp__rec__echo', arguments: { text: 'a' } }))).toBe('budget_exceeded');
    expect(t.upstreamCalls.length).toBe(reached);
    const other = t.gateway.openSession({ ...client, name: 'another-bot' });
    expect(codeOf(await t.gateway.call(other, { name: 'mcp__rec__echo', arguments: { text: 'a' } }))).toBeUndefined();
  });

  it("bounds a call by the tool's maxRuntimeMs (budget_exceeded) and by timeouts.callMs (upstream_unavailable and a restart)", async () => {
    const t = setup(
      (b) => (tool(b, 'mcp__rec__hang').budgets = { maxRuntimeMs: 50 }),
      () => ({ ok: false, code: 'timeout', message: 'no answer' }),
    );
    expect(codeOf(await t.call('mcp__rec__hang'))).toBe('budget_exceeded');
    expect(t.upstreamCalls.at(-1)).toEqual({ name: 'hang', timeoutMs: 50 });
    expect(t.restarts()).toBe(0);
    expect(codeOf(await t.call('mcp__rec__crash'))).toBe('upstream_unavailable');
    expect(t.upstreamCalls.at(-1)).toEqual({ name: 'crash', timeoutMs: 1000 });
    expect(t.restarts()).toBe(1);
  });

  it('calls a tool that needs a connection under the one granted to the client, and never under one it was not granted', async () => {
    const t = setup(
      (b) => {
        tool(b, 'mcp__rec__echo').requiresConnection = true;
        b.policy.grants = [{ connectionId: 'conn-a', subjects: ['analyst'], tools: ['mcp__rec__echo'] }];
      },
      () => text('ok'),
    );
    // Listed, so callable: the client cannot pass a connection beside the arguments.
    expect(t.gateway.list(t.session).tools.map((x) => x.name)).toContain('mcp__rec__echo');
    expect(codeOf(await t.call('mcp__rec__echo', { text: 'a' }))).toBeUndefined();
    expect(t.upstreamCalls.map((c) => c.name)).toEqual(['echo']);
    // A connection the client names in _meta is checked like any runtime's.
    const named = await t.gateway.call(t.session, { name: 'mcp__rec__echo', arguments: { text: 'a' }, _meta: { connectionId: 'conn-b' } });
    expect(codeOf(named)).toBe('policy_denied');
    // A client configured with other connections neither sees nor calls the tool.
    const elsewhere = t.gateway.openSession({ ...client, request: { ...client.request, allowedConnectionIds: ['conn-b'] } });
    expect(t.gateway.list(elsewhere).tools.map((x) => x.name)).not.toContain('mcp__rec__echo');
    expect(codeOf(await t.gateway.call(elsewhere, { name: 'mcp__rec__echo', arguments: { text: 'a' } }))).toBe('policy_denied');
    expect(t.upstreamCalls).toHaveLength(1);
  });

  it('redacts and records an approved call by the bundle held when the person answered', async () => {
    const t = setup(asksApproval, () => ({ ok: true, result: { content: [{ type: 'text', text: 'kept' }], structuredContent: { id: 1, secret: 's' } } }));
    // While the person decides, a publish narrows what echo's results may show.
    const next = mcpBundle('core', 2, 'rec', state);
    asksApproval(next);
    tool(next, 'mcp__rec__echo').redaction = { allow: ['structuredContent.id'] };
    approvedAfterPublish(t, next);
    const r = await t.call('mcp__rec__echo', { text: 'a' });
    expect(r.content).toEqual([]);
    expect(r.structuredContent).toEqual({ id: 1 });
    expect((r._meta as { toolgate: { bundleVersion: number } }).toolgate.bundleVersion).toBe(2);
    expect(t.sink.records.at(-1)).toMatchObject({ decision: 'require_approval', reason: 'client_confirmed', bundleVersion: 2 });
    expect(t.sink.records.at(-1)?.approval).toMatchObject({ by: 'client' });
  });

  it('refuses an approved call whose tool the bundle now held no longer serves from an upstream, without calling it', async () => {
    const t = setup(asksApproval, () => text('called'));
    const next = mcpBundle('core', 2, 'rec', state);
    asksApproval(next);
    tool(next, 'mcp__rec__echo').source = { kind: 'core' };
    approvedAfterPublish(t, next);
    expect(codeOf(await t.call('mcp__rec__echo', { text: 'a' }))).toBe('unavailable');
    expect(t.upstreamCalls).toEqual([]);
    expect(t.sink.records.at(-1)).toMatchObject({ errorCode: 'unavailable', bundleVersion: 2 });
  });

  it('redacts a result to its allowlist and keeps it valid MCP', async () => {
    const t = setup(
      (b) => (tool(b, 'mcp__rec__echo').redaction = { allow: ['content[].text', 'structuredContent.items[].id'] }),
      () => ({
        ok: true,
        result: {
          content: [
            { type: 'text', text: 'kept' },
            { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          ],
          structuredContent: { items: [{ id: 1, secret: 's' }], token: 't' },
          isError: true,
        },
      }),
    );
    const r = await t.call('mcp__rec__echo', { text: 'a' });
    expect(r.content).toEqual([{ type: 'text', text: 'kept' }]);
    expect(r.structuredContent).toEqual({ items: [{ id: 1 }] });
    expect(r.isError).toBe(true);
    expect(t.sink.records.at(-1)).toMatchObject({ decision: 'allow', bundleVersion: 1 });
    expect(t.sink.records.at(-1)?.errorCode).toBeUndefined();
  });
});
