// The gateway holds a call that needs a person's approval: it opens a request on the control plane,
// waits while a person decides, and proceeds only with a receipt. The agent's MCP client accepting
// an elicitation approves nothing unless the role says `approvals.by: "client"`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalHold } from '../../gateway/approval-hold.ts';
import { memoryDecisionSink } from '../../gateway/decision-sink.ts';
import { Gateway, type GatewaySession } from '../../gateway/gateway.ts';
import { createGatewayMetrics } from '../../gateway/metrics.ts';
import type { Approval, Bundle, KeySet } from '../../policy-schemas/types.gen.ts';
import { FileUsedReceipts } from '../../runtime/client/used-receipts.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { trustedKeysOf } from '../../runtime/verify-key-set.ts';
import type { TrustedKeys } from '../../runtime/verify-bundle.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { type ServedApp, startServedApp } from '../support/served-app.ts';
import { mcpBundle } from './mcp-bundle.ts';
import { scriptedClient } from './scripted-gateway.ts';

const TENANT = 'mail';
const state = upstreamFixtureState();
let srv: ServedApp;
let runtimeToken: string;
let trustedKeys: TrustedKeys;
const dirs: string[] = [];

beforeAll(async () => {
  srv = await startServedApp();
  expect((await srv.request('POST', '/v1/tenants', { body: { id: TENANT, name: 'Outgoing mail' } })).status).toBe(201);
  runtimeToken = await srv.tokenFor('runtime', [TENANT]);
  trustedKeys = trustedKeysOf((await srv.request('GET', '/.well-known/toolgate-keyset.json', { token: null })).json as KeySet);
});
afterAll(async () => {
  await srv.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function setup(opts: { by?: 'person' | 'client'; approvalMs?: number; pendingPerClient?: number } = {}) {
  const bundle: Bundle = mcpBundle(TENANT, 1, 'rec', state);
  bundle.policy.roles!.analyst.requireApproval = ['read_only'];
  if (opts.by) bundle.policy.roles!.analyst.approvals = { by: opts.by };
  const current = { loaded: loadBundle(bundle), bundle };
  const hashes = new Map(state.tools.map((t) => [t.name, definitionHash(t)]));
  const upstreamCalls: Array<{ name: string; args: Record<string, unknown> }> = [];
  const upstream = {
    isReady: () => true,
    definitionHashOf: (n: string) => hashes.get(n),
    call: async (name: string, args: Record<string, unknown>) => {
      upstreamCalls.push({ name, args });
      return { ok: true, result: { content: [{ type: 'text', text: `sent ${String(args.text)}` }] } };
    },
    restartAfterTimeout() {},
    on() {},
    off() {},
  };
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-hold-'));
  dirs.push(dir);
  const approvals = new ApprovalHold({
    connection: { url: srv.url, tenant: TENANT, token: runtimeToken },
    trustedKeys: () => trustedKeys,
    used: new FileUsedReceipts(dir, TENANT),
    approvalMs: opts.approvalMs ?? 30_000,
    progressEveryMs: 60_000,
    ...(opts.pendingPerClient ? { pendingPerClient: opts.pendingPerClient } : {}),
  });
  const sink = memoryDecisionSink();
  const gateway = new Gateway({
    config: { timeouts: { callMs: 1000, approvalMs: opts.approvalMs ?? 30_000, relistMs: 60_000 } },
    policy: { current: () => ({ ok: true, current }), on() {}, off() {} } as never,
    upstreams: new Map([['rec', upstream as never]]),
    sink,
    metrics: createGatewayMetrics(),
    approvals,
  });
  const session = gateway.openSession(scriptedClient());
  // The agent's client declares elicitation and accepts everything it is asked.
  let elicited = 0;
  const server = session.server as unknown as { getClientCapabilities(): unknown; elicitInput(): Promise<unknown> };
  server.getClientCapabilities = () => ({ elicitation: {} });
  server.elicitInput = async () => {
    elicited++;
    return { action: 'accept' };
  };
  const progress: unknown[] = [];
  (session as unknown as { channel: { notify(n: unknown): void } }).channel.notify = (n) => progress.push(n);
  const call = (text: string, s: GatewaySession = session) => gateway.call(s, { name: 'mcp__rec__echo', arguments: { text }, _meta: { progressToken: 'p-1' } });
  // Another client of the same gateway (so of the same runtime token), acting for the same subject.
  const other = gateway.openSession({ ...scriptedClient(), name: 'desk' });
  return { gateway, session, other, call, sink, upstreamCalls, elicited: () => elicited, progress };
}

const meta = (r: CallToolResult) => (r._meta as { toolgate: { decision: string; errorCode?: string } }).toolgate;
const textOf = (r: CallToolResult) => (r.content[0] as { text: string }).text;

async function pendingFor(text: string): Promise<Approval> {
  for (let i = 0; i < 200; i++) {
    const r = await srv.request('GET', `/v1/tenants/${TENANT}/approvals?state=pending`);
    const found = (r.json.items as Approval[]).find((a) => (a.arguments as { text?: string } | undefined)?.text === text);
    if (found) return found;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`no pending approval request for ${text}`);
}

const decide = (id: string, verdict: 'approve' | 'deny', reason: string) =>
  srv.request('POST', `/v1/tenants/${TENANT}/approvals/${id}/${verdict}`, { body: { reason } });

/** The pending requests whose arguments carry this text. */
async function pendingWith(text: string): Promise<Approval[]> {
  const r = await srv.request('GET', `/v1/tenants/${TENANT}/approvals?state=pending`);
  return (r.json.items as Approval[]).filter((a) => (a.arguments as { text?: string } | undefined)?.text === text);
}

describe("one client's share of the approval requests (limits.pendingApprovalsPerClient, 10)", () => {
  it('refuses a client its 11th distinct held call rate_limited, asking nobody and never calling the upstream, while another client still opens a request', async () => {
    const t = setup();
    const texts = Array.from({ length: 10 }, (_, i) => `cap-${i + 1}@acme.example`);
    const held = texts.map((text) => t.call(text));
    const requests = [];
    for (const text of texts) requests.push(await pendingFor(text));

    const refused = await t.call('cap-11@acme.example');
    expect(meta(refused)).toMatchObject({ decision: 'require_approval', errorCode: 'rate_limited' });
    expect(textOf(refused)).toMatch(
      /^rate_limited: this client already has 10 calls waiting for a person's approval, the most limits\.pendingApprovalsPerClient \(10\) allows/,
    );
    expect(await pendingWith('cap-11@acme.example')).toEqual([]);
    expect(t.upstreamCalls).toHaveLength(0);
    expect(t.sink.records.at(-1)).toMatchObject({ decision: 'require_approval', errorCode: 'rate_limited' });

    // The same call again, at the cap, is not refused: it waits on the request already open.
    const retried = t.call('cap-3@acme.example');
    // Another client of the same gateway still gets its own request.
    const desk = t.call('from-desk@acme.example', t.other);
    const deskRequest = await pendingFor('from-desk@acme.example');

    await decide(requests[2].id, 'deny', 'not this one');
    for (const r of [await held[2], await retried]) expect(meta(r).errorCode).toBe('approval_denied');
    expect(await pendingWith('cap-3@acme.example')).toEqual([]);
    // One decided: the client has room for one more distinct call.
    const next = t.call('cap-12@acme.example');
    const nextRequest = await pendingFor('cap-12@acme.example');

    for (const a of [...requests.filter((_, i) => i !== 2), deskRequest, nextRequest]) await decide(a.id, 'deny', 'tidy up');
    for (const r of [...held, desk, next]) expect(meta(await r).errorCode).toBe('approval_denied');
    expect(t.upstreamCalls).toHaveLength(0);
  });

  it('holds to the cap when a burst of distinct calls comes at once', async () => {
    const t = setup({ pendingPerClient: 3 });
    const texts = ['burst-1@acme.example', 'burst-2@acme.example', 'burst-3@acme.example', 'burst-4@acme.example', 'burst-5@acme.example'];
    const calls = texts.map((text) => t.call(text));
    const refused = await Promise.race(calls);
    expect(meta(refused).errorCode).toBe('rate_limited');
    const opened: Approval[] = [];
    for (const text of texts) opened.push(...(await pendingWith(text)));
    for (let i = 0; opened.length < 3 && i < 200; i++) {
      await new Promise((res) => setTimeout(res, 25));
      opened.length = 0;
      for (const text of texts) opened.push(...(await pendingWith(text)));
    }
    expect(opened).toHaveLength(3);
    for (const a of opened) await decide(a.id, 'deny', 'tidy up');
    const codes = (await Promise.all(calls)).map((r) => meta(r).errorCode).sort();
    expect(codes).toEqual(['approval_denied', 'approval_denied', 'approval_denied', 'rate_limited', 'rate_limited']);
  });

  it('opens one request for the same call made twice at once; one decision answers both', async () => {
    const t = setup();
    const both = [t.call('twice@acme.example'), t.call('twice@acme.example')];
    const request = await pendingFor('twice@acme.example');
    await decide(request.id, 'deny', 'not twice');
    for (const r of both) expect(textOf(await r)).toBe('approval_denied: a person denied mcp__rec__echo: not twice');
    expect(await pendingWith('twice@acme.example')).toEqual([]);
  });

  it('counts requests still pending after their calls gave up waiting, and frees the place of one a person decided meanwhile', async () => {
    const t = setup({ approvalMs: 200, pendingPerClient: 2 });
    for (const text of ['gone-1@acme.example', 'gone-2@acme.example']) expect(meta(await t.call(text)).errorCode).toBe('approval_pending');
    expect(meta(await t.call('gone-3@acme.example')).errorCode).toBe('rate_limited');
    expect(await pendingWith('gone-3@acme.example')).toEqual([]);
    // Retrying a call whose request is still open is not refused.
    expect(meta(await t.call('gone-1@acme.example')).errorCode).toBe('approval_pending');
    expect(await pendingWith('gone-1@acme.example')).toHaveLength(1);

    const [first] = await pendingWith('gone-1@acme.example');
    await decide(first.id, 'deny', 'not this one');
    expect(meta(await t.call('gone-3@acme.example')).errorCode).toBe('approval_pending');
    expect(await pendingWith('gone-3@acme.example')).toHaveLength(1);
    // The decided call retried still hears the person's answer.
    expect(textOf(await t.call('gone-1@acme.example'))).toBe('approval_denied: a person denied mcp__rec__echo: not this one');
    for (const text of ['gone-2@acme.example', 'gone-3@acme.example']) for (const a of await pendingWith(text)) await decide(a.id, 'deny', 'tidy up');
  });
});

describe('a call held for a person', () => {
  it('goes through once a person approves it, with progress while it waits, and records who approved', async () => {
    const t = setup();
    const held = t.call('to finance@acme.example');
    const request = await pendingFor('to finance@acme.example');
    expect(request).toMatchObject({ subject: 'agent:support-bot', tool: 'mcp__rec__echo', bundleVersion: 1 });
    expect(request.reason).toContain('read_only calls need approval');
    expect((await decide(request.id, 'approve', 'quarterly report, expected')).status).toBe(200);
    const r = await held;
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toBe('sent to finance@acme.example');
    expect(t.upstreamCalls).toHaveLength(1);
    expect(t.progress).toContainEqual(
      expect.objectContaining({ method: 'notifications/progress', params: expect.objectContaining({ progressToken: 'p-1', progress: 0 }) }),
    );
    expect(t.sink.records.at(-1)).toMatchObject({ decision: 'require_approval', approval: { id: request.id, by: 'person' } });
    expect(t.sink.records.at(-1)?.reason).toBeUndefined();
  });

  it('refuses approval_denied when a person denies it, never calling the upstream', async () => {
    const t = setup();
    const held = t.call('to everyone@list.example');
    const request = await pendingFor('to everyone@list.example');
    await decide(request.id, 'deny', 'not to a mailing list');
    const r = await held;
    expect(meta(r)).toMatchObject({ decision: 'require_approval', errorCode: 'approval_denied' });
    expect(textOf(r)).toBe('approval_denied: a person denied mcp__rec__echo: not to a mailing list');
    expect(t.upstreamCalls).toHaveLength(0);
  });

  it('answers approval_pending naming the request when nobody decides in time; the same call retried after approval goes through', async () => {
    const t = setup({ approvalMs: 300 });
    const first = await t.call('to auditor@bank.example');
    expect(meta(first).errorCode).toBe('approval_pending');
    const request = await pendingFor('to auditor@bank.example');
    expect(textOf(first)).toContain(`request ${request.id}`);
    expect(textOf(first)).toContain(`${srv.url}/#/approvals?tenant=${TENANT}&id=${request.id}`);
    await decide(request.id, 'approve', 'the auditor asked');
    const retried = await t.call('to auditor@bank.example');
    expect(retried.isError).toBeFalsy();
    expect(t.upstreamCalls).toHaveLength(1);
    // The receipt allowed that one call: the next identical call asks a person again.
    const again = await t.call('to auditor@bank.example');
    expect(meta(again).errorCode).toBe('approval_pending');
    expect(t.upstreamCalls).toHaveLength(1);
    const fresh = await pendingFor('to auditor@bank.example');
    expect(fresh.id).not.toBe(request.id);
    await decide(fresh.id, 'deny', 'tidy up');
  });
});

describe("the agent's own client", () => {
  it('cannot approve: accepting an elicitation counts for nothing where a person must decide', async () => {
    const t = setup({ approvalMs: 300 });
    const r = await t.call('to attacker@evil.example');
    expect(t.elicited()).toBe(0);
    expect(meta(r)).toMatchObject({ decision: 'require_approval', errorCode: 'approval_pending' });
    expect(t.upstreamCalls).toHaveLength(0);
    const record = t.sink.records.at(-1)!;
    expect(record.reason).toBeUndefined();
    expect(record.approval).toBeUndefined();
    const request = await pendingFor('to attacker@evil.example');
    await decide(request.id, 'deny', 'tidy up');
  });

  it('confirms where the role says approvals.by: "client", recorded as client_confirmed', async () => {
    const t = setup({ by: 'client' });
    const r = await t.call('to colleague@acme.example');
    expect(r.isError).toBeFalsy();
    expect(t.elicited()).toBe(1);
    expect(t.sink.records.at(-1)).toMatchObject({ reason: 'client_confirmed', approval: { by: 'client' } });
  });
});
