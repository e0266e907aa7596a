// The attack: an agent asks for a call through a harmless connection (a sandbox account), a person
// approves what they see, and the agent sends the same call again through another connection it
// is granted (production). A receipt names no connection (DESIGN fixes its fields), so the gateway
// binds the held request to the connection: the call through the other connection asks anew,
// and the request tells the person which connection the call runs through.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalHold } from '../../gateway/approval-hold.ts';
import { memoryDecisionSink } from '../../gateway/decision-sink.ts';
import { Gateway } from '../../gateway/gateway.ts';
import { createGatewayMetrics } from '../../gateway/metrics.ts';
import type { Approval, Bundle, KeySet } from '../../policy-schemas/types.gen.ts';
import { BundleClient } from '../../runtime/client/bundle-client.ts';
import { FileUsedReceipts } from '../../runtime/client/used-receipts.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { TrustedKeys } from '../../runtime/verify-bundle.ts';
import { trustedKeysOf } from '../../runtime/verify-key-set.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { MCP_BUNDLE_SUBJECT, mcpBundle } from '../gateway/mcp-bundle.ts';
import { makeBundle } from '../distribution/signed-bundles.ts';
import { scriptedClient } from '../gateway/scripted-gateway.ts';
import { type ServedApp, startServedApp } from '../support/served-app.ts';

const TENANT = 'mail';
const state = upstreamFixtureState();
let srv: ServedApp;
let runtimeToken: string;
let trustedKeys: TrustedKeys;
let dir: string;

beforeAll(async () => {
  srv = await startServedApp();
  expect((await srv.request('POST', '/v1/tenants', { body: { id: TENANT, name: 'Outgoing mail' } })).status).toBe(201);
  runtimeToken = await srv.tokenFor('runtime', [TENANT]);
  trustedKeys = trustedKeysOf((await srv.request('GET', '/.well-known/toolgate-keyset.json', { token: null })).json as KeySet);
  dir = mkdtempSync(join(tmpdir(), 'toolgate-hold-conn-'));
});
afterAll(async () => {
  await srv.close();
  rmSync(dir, { recursive: true, force: true });
});

function gatewayWithTwoConnections() {
  const bundle: Bundle = mcpBundle(TENANT, 1, 'rec', state);
  bundle.policy.roles!.analyst.requireApproval = ['read_only'];
  bundle.policy.grants = ['prod-account', 'sandbox-account'].map((connectionId) => ({ connectionId, subjects: [MCP_BUNDLE_SUBJECT], tools: ['mcp__rec__*'] }));
  const current = { loaded: loadBundle(bundle), bundle };
  const hashes = new Map(state.tools.map((t) => [t.name, definitionHash(t)]));
  const upstreamCalls: string[] = [];
  const upstream = {
    isReady: () => true,
    definitionHashOf: (n: string) => hashes.get(n),
    call: async (_name: string, args: Record<string, unknown>) => {
      upstreamCalls.push(String(args.text));
      return { ok: true, result: { content: [{ type: 'text', text: 'sent' }] } };
    },
    restartAfterTimeout() {},
    on() {},
    off() {},
  };
  const approvals = new ApprovalHold({
    connection: { url: srv.url, tenant: TENANT, token: runtimeToken },
    trustedKeys: () => trustedKeys,
    used: new FileUsedReceipts(dir, TENANT),
    approvalMs: 300,
    progressEveryMs: 60_000,
  });
  const gateway = new Gateway({
    config: { timeouts: { callMs: 1000, approvalMs: 300, relistMs: 60_000 } },
    policy: { current: () => ({ ok: true, current }), on() {}, off() {} } as never,
    upstreams: new Map([['rec', upstream as never]]),
    sink: memoryDecisionSink(),
    metrics: createGatewayMetrics(),
    approvals,
  });
  const session = gateway.openSession(scriptedClient());
  const call = (text: string, connectionId: string) => gateway.call(session, { name: 'mcp__rec__echo', arguments: { text }, _meta: { connectionId } });
  return { call, upstreamCalls };
}

const meta = (r: CallToolResult) => (r._meta as { toolgate: { decision: string; errorCode?: string } }).toolgate;

async function pendingWith(text: string, member = 'text'): Promise<Approval[]> {
  const r = await srv.request('GET', `/v1/tenants/${TENANT}/approvals?state=pending`);
  return (r.json.items as Approval[]).filter((a) => (a.arguments as Record<string, unknown> | undefined)?.[member] === text);
}

describe('an approval given for a call through one connection', () => {
  it('does not let the same call through another connection; that call asks a person anew', async () => {
    const g = gatewayWithTwoConnections();
    const text = 'wire the refund';
    const first = await g.call(text, 'sandbox-account');
    expect(meta(first)).toMatchObject({ decision: 'require_approval', errorCode: 'approval_pending' });
    const [asked] = await pendingWith(text);
    expect(asked.reason).toContain('through connection sandbox-account');
    expect((await srv.request('POST', `/v1/tenants/${TENANT}/approvals/${asked.id}/approve`, { body: { reason: 'sandbox is fine' } })).status).toBe(200);

    const moved = await g.call(text, 'prod-account');
    expect(meta(moved)).toMatchObject({ decision: 'require_approval', errorCode: 'approval_pending' });
    expect(g.upstreamCalls).toEqual([]);
    const [askedAgain] = await pendingWith(text);
    expect(askedAgain.id).not.toBe(asked.id);
    expect(askedAgain.reason).toContain('through connection prod-account');

    // The call the person approved still goes through, once, through its own connection.
    const approved = await g.call(text, 'sandbox-account');
    expect(approved.isError).toBeFalsy();
    expect(g.upstreamCalls).toEqual([text]);
  });
});

describe('an approval the SDK client asked for through one connection', () => {
  it('is refused for the same call through another connection, and still lets the call through its own', async () => {
    const bundle = makeBundle({ tenant: TENANT, version: 1 });
    bundle.policy.grants = ['prod-account', 'sandbox-account'].map((connectionId) => ({ connectionId, subjects: ['agent:support-bot'], tools: ['core__*'] }));
    const view = createView(loadBundle(bundle), { subject: 'agent:support-bot' });
    const serverKeys = (await srv.request('GET', '/.well-known/jwks.json', { token: null })).json as TrustedKeys;
    const client = new BundleClient({ url: srv.url, tenant: TENANT, token: runtimeToken, trustedKeys: serverKeys, cacheDir: dir, decisionLog: false });
    // core__tool-0002 changes state: the analyst role needs a person's approval for it.
    const call = { name: 'core__tool-0002', arguments: { query: 'close the account' }, connectionId: 'sandbox-account' };
    const asked = decide(view, call);
    expect(asked.decision).toBe('require_approval');
    const waiting = client.requestApproval(view, call, asked, { timeoutMs: 20_000 });
    const [request] = await (async () => {
      for (let i = 0; i < 200; i++) {
        const found = await pendingWith('close the account', 'query');
        if (found.length > 0) return found;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('no approval request opened');
    })();
    expect(request.reason).toContain('through connection sandbox-account');
    expect((await srv.request('POST', `/v1/tenants/${TENANT}/approvals/${request.id}/approve`, { body: { reason: 'sandbox only' } })).status).toBe(200);
    const outcome = await waiting;
    if (outcome.state !== 'approved') throw new Error(`expected an approval, got ${outcome.state}`);

    const moved = decide(view, { ...call, connectionId: 'prod-account' }, { approval: client.approval(outcome.receipt) });
    expect(moved).toMatchObject({
      decision: 'deny',
      errorCode: 'approval_invalid',
      message: 'the approval receipt is for the call through another connection',
    });
    // The refusal did not use the receipt up: the approved call still goes through, once.
    expect(decide(view, call, { approval: client.approval(outcome.receipt) }).decision).toBe('allow');
    expect(decide(view, call, { approval: client.approval(outcome.receipt) }).errorCode).toBe('approval_invalid');
  });
});
