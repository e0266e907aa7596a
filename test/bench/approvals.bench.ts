// Approvals: what checking a receipt costs a runtime (offline, on every call that needs one), and
// how fast a person's approval reaches a call that waits for it: 100 concurrent gateway calls
// held for approval, and 100 concurrent requestApproval long-polls of the SDK, each approved by
// a person through the API of a `toolgate serve` process. Prints figures; asserts nothing about timing.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalHold } from '../../gateway/approval-hold.ts';
import { memoryDecisionSink } from '../../gateway/decision-sink.ts';
import { Gateway } from '../../gateway/gateway.ts';
import { createGatewayMetrics } from '../../gateway/metrics.ts';
import type { Approval, ApprovalReceiptPayload, Bundle, KeySet } from '../../policy-schemas/types.gen.ts';
import { approvalFor, argumentsDigest, MemoryUsedReceipts, verifyApprovalReceipt } from '../../runtime/approval-receipt.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { requestApproval } from '../../runtime/client/approval-requests.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { trustedKeysOf } from '../../runtime/verify-key-set.ts';
import { signApprovalReceipt } from '../../server/signing/sign.ts';
import { makeBundle } from '../distribution/signed-bundles.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { mcpBundle } from '../gateway/mcp-bundle.ts';
import { freePort } from '../support/free-port.ts';
import { killProcessGroup, serveEnv, waitUntilHealthy } from '../support/spawned-server.ts';

const CONCURRENT = 100;
const ROOT = join(import.meta.dirname, '..', '..');
const ADMIN = 'tg_bench_admin_token_0123456789abcdef';

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
const ms = (v: number) => `${v.toFixed(1)} ms`;

async function receiptFigures(): Promise<void> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const kid = 'bench-key';
  const trustedKeys = { keys: [{ kid, kty: 'OKP', crv: 'Ed25519', x: publicKey.export({ format: 'jwk' }).x as string, status: 'active' }] };
  const sign = async (id: string) => {
    const payload: ApprovalReceiptPayload = {
      format: 'toolgate.approval/v1',
      tenant: 'acme',
      id,
      subject: 'agent:support-bot',
      tool: 'core__tool-0002',
      argumentsDigest: argumentsDigest({ query: 'send it' }),
      approvedBy: 'user:alice',
      approvedAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 900_000).toISOString(),
    };
    return {
      payload,
      signature: await signApprovalReceipt(Buffer.from(canonicalJson(payload), 'utf8'), { kid, privateKey: privateKey as unknown as CryptoKey }),
    };
  };
  const one = await sign(globalThis.crypto.randomUUID());
  const call = { tenant: 'acme', subject: 'agent:support-bot', tool: 'core__tool-0002', arguments: { query: 'send it' } };
  const verifyTimes: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    const t0 = performance.now();
    const r = verifyApprovalReceipt(one, call, { trustedKeys });
    const dt = performance.now() - t0;
    if (!r.ok) throw new Error(r.message);
    if (i >= 2000) verifyTimes.push(dt);
  }
  verifyTimes.sort((a, b) => a - b);
  console.log(
    `receipt verification (signature, tenant, subject, tool, arguments digest, expiry): p50 ${us(pct(verifyTimes, 50))}, p99 ${us(pct(verifyTimes, 99))}, mean ${us(verifyTimes.reduce((a, b) => a + b, 0) / verifyTimes.length)} over ${verifyTimes.length}`,
  );

  // decide() with a receipt: the whole call decision, the receipt checked and used up.
  const view = createView(loadBundle(makeBundle({ tenant: 'acme', version: 1 }) as Bundle), { subject: 'agent:support-bot' });
  const receipts = await Promise.all(Array.from({ length: 5000 }, () => sign(globalThis.crypto.randomUUID())));
  const used = new MemoryUsedReceipts();
  const decideTimes: number[] = [];
  for (const r of receipts) {
    const t0 = performance.now();
    const d = decide(view, { name: 'core__tool-0002', arguments: { query: 'send it' } }, { approval: approvalFor(r, { trustedKeys, used }) });
    decideTimes.push(performance.now() - t0);
    if (d.decision !== 'allow') throw new Error(`${d.errorCode}: ${d.message}`);
  }
  decideTimes.sort((a, b) => a - b);
  console.log(
    `decide() of a call with its receipt (verified and used up): p50 ${us(pct(decideTimes, 50))}, p99 ${us(pct(decideTimes, 99))} over ${decideTimes.length}`,
  );
}

/**
 * `toolgate serve` in its own process (as deployed: the control plane is not the gateway's or the
 * runtime's process), on a fresh SQLite database.
 */
async function startServer() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-approvals-bench-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli/main.ts', 'serve'], {
    cwd: ROOT,
    detached: true,
    env: serveEnv({ port, dir, adminToken: ADMIN, seed: 'none' }),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilHealthy(url, child, 60_000);
  const api = async (method: string, path: string, body?: unknown, token = ADMIN) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return {
    url,
    api,
    async close() {
      killProcessGroup(child, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until `n` requests of the tenant are pending; returns them. */
async function pending(api: Awaited<ReturnType<typeof startServer>>['api'], tenant: string, n: number): Promise<Approval[]> {
  for (;;) {
    const items: Approval[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Approval[]; nextCursor: string | null } = await api(
        'GET',
        `/v1/tenants/${tenant}/approvals?state=pending&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    if (items.length >= n) return items;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Approves the requests: one after another, as a person clicks through the queue (`burst: false`),
 * or all at the same instant (`burst: true`, many people at once: the approvals queue up in the
 * server's database writes). Answers each approval's send time by id.
 */
async function approveAll(
  api: Awaited<ReturnType<typeof startServer>>['api'],
  tenant: string,
  list: Approval[],
  approver: string,
  burst: boolean,
): Promise<{ sentAt: Map<string, number>; answeredAt: Map<string, number> }> {
  const sentAt = new Map<string, number>();
  const answeredAt = new Map<string, number>();
  const approve = async (a: Approval) => {
    sentAt.set(a.id, performance.now());
    await api('POST', `/v1/tenants/${tenant}/approvals/${a.id}/approve`, { reason: 'bench' }, approver);
    answeredAt.set(a.id, performance.now());
  };
  if (burst) await Promise.all(list.map(approve));
  else for (const a of list) await approve(a);
  return { sentAt, answeredAt };
}

/** Two lines: from the approval sent to the waiter's answer, and from the approval recorded (its answer) to the waiter's. */
function printLatencies(what: string, burst: boolean, list: Approval[], doneAt: (a: Approval) => number, times: Awaited<ReturnType<typeof approveAll>>): void {
  const how = burst ? 'all 100 approved at once' : 'approved one after another';
  console.log(
    latencyLine(
      `a person’s approval reaching ${what} (approve sent → waiter answered; ${how})`,
      list.map((a) => doneAt(a) - times.sentAt.get(a.id)!),
    ),
  );
  console.log(
    latencyLine(
      `  the same once the approval is recorded (approve answered → waiter answered; ${how})`,
      list.map((a) => Math.max(0, doneAt(a) - times.answeredAt.get(a.id)!)),
    ),
  );
}

function latencyLine(label: string, latencies: number[]): string {
  latencies.sort((a, b) => a - b);
  return `${label}: p50 ${ms(pct(latencies, 50))}, p99 ${ms(pct(latencies, 99))}, max ${ms(latencies[latencies.length - 1])} over ${latencies.length} concurrent`;
}

async function gatewayFigures(srv: Awaited<ReturnType<typeof startServer>>, burst: boolean): Promise<void> {
  const tenant = burst ? 'mail-burst' : 'mail';
  await srv.api('POST', '/v1/tenants', { id: tenant, name: 'Outgoing mail' });
  const runtime = (await srv.api('POST', '/v1/tokens', { label: 'gateway', role: 'runtime', tenants: [tenant] })).token as string;
  const approver = (await srv.api('POST', '/v1/tokens', { label: 'approver', role: 'editor', tenants: [tenant] })).token as string;
  const keySet = (await (await fetch(`${srv.url}/.well-known/toolgate-keyset.json`)).json()) as KeySet;
  const state = upstreamFixtureState();
  const bundle = mcpBundle(tenant, 1, 'rec', state);
  bundle.policy.roles!.analyst.requireApproval = ['read_only'];
  const current = { loaded: loadBundle(bundle), bundle };
  const hashes = new Map(state.tools.map((t) => [t.name, definitionHash(t)]));
  const upstream = {
    isReady: () => true,
    definitionHashOf: (n: string) => hashes.get(n),
    call: async () => ({ ok: true, result: { content: [{ type: 'text', text: 'sent' }] } }),
    restartAfterTimeout() {},
    on() {},
    off() {},
  };
  const gateway = new Gateway({
    config: { timeouts: { callMs: 5000, approvalMs: 120_000, relistMs: 60_000 } },
    policy: { current: () => ({ ok: true, current }), on() {}, off() {} } as never,
    upstreams: new Map([['rec', upstream as never]]),
    sink: memoryDecisionSink(),
    metrics: createGatewayMetrics(),
    approvals: new ApprovalHold({
      connection: { url: srv.url, tenant, token: runtime },
      trustedKeys: () => trustedKeysOf(keySet),
      used: new MemoryUsedReceipts(),
      approvalMs: 120_000,
      // One client stands in for many here: its calls may fill the server's 100 pending requests.
      pendingPerClient: CONCURRENT,
    }),
  });
  const client = { name: 'bot', subject: 'agent:support-bot', keyDigest: null, request: { subject: 'agent:support-bot' }, initialState: 'undefined' };
  const session = gateway.openSession(client);
  const doneAt = new Map<string, number>();
  const calls = Array.from({ length: CONCURRENT }, (_, i) => {
    const text = `mail ${i} to outside@elsewhere.example`;
    return gateway.call(session, { name: 'mcp__rec__echo', arguments: { text } }).then((r) => {
      if (r.isError) throw new Error(JSON.stringify(r.content));
      doneAt.set(text, performance.now());
    });
  });
  const list = await pending(srv.api, tenant, CONCURRENT);
  const times = await approveAll(srv.api, tenant, list, approver, burst);
  await Promise.all(calls);
  printLatencies('a held gateway call', burst, list, (a) => doneAt.get((a.arguments as { text: string }).text)!, times);
  gateway.close();
}

async function sdkFigures(srv: Awaited<ReturnType<typeof startServer>>, burst: boolean): Promise<void> {
  const tenant = burst ? 'sdk-burst' : 'sdk';
  await srv.api('POST', '/v1/tenants', { id: tenant, name: 'SDK runtimes' });
  const runtime = (await srv.api('POST', '/v1/tokens', { label: 'runtime', role: 'runtime', tenants: [tenant] })).token as string;
  const approver = (await srv.api('POST', '/v1/tokens', { label: 'approver', role: 'editor', tenants: [tenant] })).token as string;
  const doneAt = new Map<string, number>();
  const waits = Array.from({ length: CONCURRENT }, (_, i) =>
    requestApproval(
      { url: srv.url, tenant, token: runtime },
      { subject: 'agent:support-bot', tool: 'core__send_email', arguments: { to: `person${i}@elsewhere.example` }, reason: 'mail outside the company' },
      { timeoutMs: 120_000 },
    ).then((o) => {
      if (o.state !== 'approved') throw new Error(`request ${o.id} ended ${o.state}`);
      doneAt.set(o.id, performance.now());
    }),
  );
  const list = await pending(srv.api, tenant, CONCURRENT);
  const times = await approveAll(srv.api, tenant, list, approver, burst);
  await Promise.all(waits);
  printLatencies('a waiting requestApproval long-poll', burst, list, (a) => doneAt.get(a.id)!, times);
}

async function main(): Promise<void> {
  await receiptFigures();
  const srv = await startServer();
  try {
    for (const burst of [false, true]) {
      await gatewayFigures(srv, burst);
      await sdkFigures(srv, burst);
    }
  } finally {
    await srv.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
