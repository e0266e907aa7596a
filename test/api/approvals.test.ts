import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval, KeySet } from '../../policy-schemas/types.gen.ts';
import { argumentsDigest, verifyApprovalReceipt } from '../../runtime/approval-receipt.ts';
import { trustedKeysOf } from '../../runtime/verify-key-set.ts';
import { startApprovalExpiry } from '../../server/approvals/approval-expiry.ts';
import { ADMIN_TOKEN, type TestApp, startTestApp } from '../support/harness.ts';

const tenant = 'acme-research';
const base = `/v1/tenants/${tenant}/approvals`;
const mail = { to: 'someone@elsewhere.example', subject: 'Quarterly numbers', body: 'see attached' };

let t: TestApp;
let runtime: string;
let otherRuntime: string;
let editor: string;
let otherEditor: string;
let viewer: string;
let webhook: Server;
const hooks: unknown[] = [];

beforeAll(async () => {
  webhook = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      hooks.push(JSON.parse(text));
      res.end('ok');
    });
  });
  await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
  const port = (webhook.address() as AddressInfo).port;
  t = await startTestApp({
    settings: { approvals: { maxPendingPerRequester: 3, webhook: `http://127.0.0.1:${port}/hook/secret-path`, publicUrl: 'https://toolgate.example' } },
  });
  runtime = await t.tokenFor('runtime', [tenant]);
  otherRuntime = await t.tokenFor('runtime', [tenant]);
  editor = await t.tokenFor('editor', [tenant]);
  otherEditor = await t.tokenFor('editor', ['globex-eng']);
  viewer = await t.tokenFor('viewer', [tenant]);
});
afterAll(async () => {
  await t.close();
  await new Promise((r) => webhook.close(r));
});

async function open(token = runtime, args: Record<string, unknown> = mail) {
  return t.request('POST', base, {
    token,
    body: { subject: 'agent:research-bot', tool: 'core__send_email', arguments: args, reason: 'mail outside the company needs a person', bundleVersion: 3 },
  });
}

async function trustedKeys() {
  const r = await t.request('GET', '/.well-known/toolgate-keyset.json', { token: null });
  return trustedKeysOf(r.json as KeySet);
}

describe('approval requests', () => {
  it('lets a runtime open a request that deciders see with its arguments, the rule that asked and the digest', async () => {
    const r = await open();
    expect(r.status).toBe(201);
    const a = r.json as Approval;
    expect(a).toMatchObject({
      state: 'pending',
      subject: 'agent:research-bot',
      tool: 'core__send_email',
      reason: 'mail outside the company needs a person',
      bundleVersion: 3,
    });
    expect(a.argumentsDigest).toBe(argumentsDigest(mail));
    expect(Date.parse(a.expiresAt) - Date.parse(a.requestedAt)).toBe(3600_000);

    const listed = await t.request('GET', `${base}?state=pending`, { token: editor });
    expect(listed.status).toBe(200);
    const item = (listed.json.items as Approval[]).find((i) => i.id === a.id);
    expect(item?.arguments).toEqual(mail);
    // Viewers see the queue, not what the agent wanted to send.
    const seen = await t.request('GET', `${base}?state=pending`, { token: viewer });
    expect((seen.json.items as Approval[]).find((i) => i.id === a.id)?.arguments).toBeUndefined();
    await t.request('POST', `${base}/${a.id}/deny`, { body: { reason: 'tidy up' } });
  });

  it('approves with a receipt that verifies offline, deletes the arguments, and audits both steps without them', async () => {
    const a = (await open()).json as Approval;
    const decided = await t.request('POST', `${base}/${a.id}/approve`, { token: editor, body: { reason: 'the customer asked for it' } });
    expect(decided.status).toBe(200);
    expect(decided.json).toMatchObject({ state: 'approved', decisionReason: 'the customer asked for it' });
    const receipt = decided.json.receipt;
    expect(receipt.payload).toMatchObject({ format: 'toolgate.approval/v1', tenant, id: a.id, subject: 'agent:research-bot', tool: 'core__send_email' });
    expect(Date.parse(receipt.payload.expiresAt) - Date.parse(receipt.payload.approvedAt)).toBe(900_000);
    const check = verifyApprovalReceipt(
      receipt,
      { tenant, subject: 'agent:research-bot', tool: 'core__send_email', arguments: mail },
      { trustedKeys: await trustedKeys() },
    );
    expect(check).toMatchObject({ ok: true });

    const polled = await t.request('GET', `${base}/${a.id}`, { token: runtime });
    expect(polled.json.state).toBe('approved');
    expect(polled.json.arguments).toBeUndefined();
    const row = await t.deps.database.db.selectFrom('approval_requests').select('arguments').where('id', '=', a.id).executeTakeFirstOrThrow();
    expect(row.arguments).toBeNull();

    const events = await t.deps.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('entity_type', '=', 'approval')
      .where('entity_id', '=', a.id)
      .orderBy('seq')
      .execute();
    expect(events.map((e) => e.action)).toEqual(['create', 'approve']);
    expect(events[1].reason).toBe('the customer asked for it');
    expect(JSON.stringify(events)).not.toContain('someone@elsewhere.example');
  });

  it('answers a waiting long poll with the decision', async () => {
    const a = (await open()).json as Approval;
    const waiting = t.request('GET', `${base}/${a.id}?wait=30`, { token: runtime });
    await new Promise((r) => setTimeout(r, 50));
    await t.request('POST', `${base}/${a.id}/deny`, { token: editor, body: { reason: 'not to that address' } });
    const r = await waiting;
    expect(r.json).toMatchObject({ state: 'denied', decisionReason: 'not to that address' });
    expect(r.json.receipt).toBeUndefined();
  });

  it('expires a request nobody decided, deletes its arguments, and refuses a late decision', async () => {
    const a = (await open()).json as Approval;
    await t.deps.database.db
      .updateTable('approval_requests')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', a.id)
      .execute();
    const r = await t.request('GET', `${base}/${a.id}`, { token: editor });
    expect(r.json.state).toBe('expired');
    expect(r.json.arguments).toBeUndefined();
    const row = await t.deps.database.db.selectFrom('approval_requests').select('arguments').where('id', '=', a.id).executeTakeFirstOrThrow();
    expect(row.arguments).toBeNull();
    const late = await t.request('POST', `${base}/${a.id}/approve`, { token: editor, body: { reason: 'late' } });
    expect(late.status).toBe(409);
  });

  it('refuses a second decision on a decided request', async () => {
    const a = (await open()).json as Approval;
    expect((await t.request('POST', `${base}/${a.id}/deny`, { token: editor, body: { reason: 'no' } })).status).toBe(200);
    const again = await t.request('POST', `${base}/${a.id}/approve`, { body: { reason: 'yes after all' } });
    expect(again.status).toBe(409);
    expect(again.json.detail).toContain('already denied');
  });

  it('tells the webhook of a new request with a console link, never the arguments', async () => {
    const a = (await open()).json as Approval;
    for (let i = 0; i < 50 && !hooks.some((h) => (h as { approval: { id: string } }).approval.id === a.id); i++) await new Promise((r) => setTimeout(r, 20));
    const hook = hooks.find((h) => (h as { approval: { id: string } }).approval.id === a.id) as Record<string, unknown>;
    expect(hook).toMatchObject({
      type: 'toolgate.approval.requested',
      approval: { tool: 'core__send_email', subject: 'agent:research-bot', reason: 'mail outside the company needs a person' },
    });
    expect(hook.link).toBe(`https://toolgate.example/#/approvals?tenant=${tenant}&id=${a.id}`);
    expect(JSON.stringify(hook)).not.toContain('elsewhere.example');
    await t.request('POST', `${base}/${a.id}/deny`, { body: { reason: 'tidy up' } });
  });
});

describe('who may decide', () => {
  it('refuses the runtime token that asked (it holds no deciding role) and any token deciding its own request', async () => {
    const a = (await open()).json as Approval;
    const own = await t.request('POST', `${base}/${a.id}/approve`, { token: runtime, body: { reason: 'I approve myself' } });
    expect(own.status).toBe(403);
    // An admin token that opened a request may not approve it either: a person decides.
    const mine = (await open(ADMIN_TOKEN)).json as Approval;
    const self = await t.request('POST', `${base}/${mine.id}/approve`, { body: { reason: 'me' } });
    expect(self.status).toBe(403);
    expect(self.json.detail).toContain('may not decide it');
    expect((await t.request('GET', `${base}/${a.id}`, { token: editor })).json.state).toBe('pending');
    await t.request('POST', `${base}/${a.id}/deny`, { token: editor, body: { reason: 'tidy up' } });
    await t.request('POST', `${base}/${mine.id}/deny`, { token: editor, body: { reason: 'tidy up' } });
  });

  it('hides a tenant’s requests from an editor of another tenant, who cannot decide them', async () => {
    const a = (await open()).json as Approval;
    expect((await t.request('POST', `${base}/${a.id}/approve`, { token: otherEditor, body: { reason: 'from globex' } })).status).toBe(404);
    expect((await t.request('GET', base, { token: otherEditor })).status).toBe(404);
    expect((await t.request('GET', `${base}/${a.id}`, { token: otherEditor })).status).toBe(404);
    expect((await t.request('POST', `${base}/${a.id}/approve`, { token: viewer, body: { reason: 'viewer' } })).status).toBe(403);
    expect((await t.request('GET', `${base}/${a.id}`, { token: editor })).json.state).toBe('pending');
    await t.request('POST', `${base}/${a.id}/deny`, { token: editor, body: { reason: 'tidy up' } });
  });

  it('refuses a runtime token asking in another tenant as if that tenant did not exist', async () => {
    const r = await t.request('POST', '/v1/tenants/globex-eng/approvals', {
      token: runtime,
      body: { subject: 'agent:coding-bot', tool: 'core__send_email', arguments: {}, reason: 'cross-tenant' },
    });
    expect(r.status).toBe(404);
    expect((await t.request('GET', '/v1/tenants/globex-eng/approvals?state=pending')).json.items).toEqual([]);
  });

  it('lets another runtime token of the tenant neither read nor list requests it did not open', async () => {
    const a = (await open()).json as Approval;
    expect((await t.request('GET', `${base}/${a.id}`, { token: otherRuntime })).status).toBe(404);
    expect((await t.request('GET', base, { token: otherRuntime })).status).toBe(403);
    await t.request('POST', `${base}/${a.id}/deny`, { token: editor, body: { reason: 'tidy up' } });
  });
});

describe('a flood of requests', () => {
  it('stops one token at its bound with a clear 429 while others still ask and people still decide', async () => {
    const flooder = await t.tokenFor('runtime', [tenant]);
    const opened: Approval[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await open(flooder, { to: `x${i}@elsewhere.example` });
      expect(r.status).toBe(201);
      opened.push(r.json);
    }
    const refused = await open(flooder, { to: 'more@elsewhere.example' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.json).toMatchObject({ code: 'rate_limited', pending: 3, limit: 3 });
    expect(refused.json.detail).toContain('already has 3 approval requests waiting');
    // The queue stays usable: another runtime still asks, a person still decides.
    const other = await open(otherRuntime);
    expect(other.status).toBe(201);
    expect((await t.request('POST', `${base}/${opened[0].id}/deny`, { token: editor, body: { reason: 'flood' } })).status).toBe(200);
    expect((await open(flooder, { to: 'after@elsewhere.example' })).status).toBe(201);
    await t.request('POST', `${base}/${other.json.id}/deny`, { token: editor, body: { reason: 'tidy up' } });
  });
});

describe('bad input', () => {
  it('names the pointer of each bad field and stores nothing', async () => {
    const before = await t.deps.database.db
      .selectFrom('approval_requests')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const r = await t.request('POST', base, { token: otherRuntime, body: { tool: 'not a tool', arguments: [], reason: '' } });
    expect(r.status).toBe(400);
    const pointers = (r.json.errors as { pointer: string }[]).map((e) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/subject', '/tool', '/arguments', '/reason']));
    const big = await t.request('POST', base, {
      token: otherRuntime,
      body: { subject: 'agent:research-bot', tool: 'core__send_email', arguments: { body: 'x'.repeat(70_000) }, reason: 'big' },
    });
    expect(big.status).toBe(413);
    expect(big.json.errors[0].pointer).toBe('/arguments');
    const after = await t.deps.database.db
      .selectFrom('approval_requests')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('refuses a decision without a reason, a bad filter, a bad wait and an unknown id', async () => {
    const a = (await open(otherRuntime)).json as Approval;
    const noReason = await t.request('POST', `${base}/${a.id}/approve`, { token: editor, body: {} });
    expect(noReason.status).toBe(400);
    expect(noReason.json.errors[0].pointer).toBe('/reason');
    expect((await t.request('GET', `${base}?state=maybe`, { token: editor })).status).toBe(400);
    expect((await t.request('GET', `${base}?limit=0`, { token: editor })).status).toBe(400);
    expect((await t.request('GET', `${base}/${a.id}?wait=soon`, { token: editor })).status).toBe(400);
    expect((await t.request('GET', `${base}/00000000-0000-4000-8000-000000000000`, { token: editor })).status).toBe(404);
    expect((await t.request('POST', `${base}/nope/approve`, { token: editor, body: { reason: 'x' } })).status).toBe(404);
    expect((await t.request('GET', `/v1/tenants/no-such-tenant/approvals`)).status).toBe(404);
    await t.request('POST', `${base}/${a.id}/deny`, { token: editor, body: { reason: 'tidy up' } });
  });

  it('pages through decided requests newest first', async () => {
    const p1 = await t.request('GET', `${base}?state=decided&limit=2`, { token: editor });
    expect(p1.status).toBe(200);
    expect(p1.json.items).toHaveLength(2);
    const p2 = await t.request('GET', `${base}?state=decided&limit=2&cursor=${encodeURIComponent(p1.json.nextCursor)}`, { token: editor });
    expect(p2.json.items.length).toBeGreaterThan(0);
    const all = [...p1.json.items, ...p2.json.items] as Approval[];
    expect(new Set(all.map((a) => a.id)).size).toBe(all.length);
    expect(all.every((a) => a.state === 'approved' || a.state === 'denied')).toBe(true);
    expect(Date.parse(p1.json.items[1].requestedAt)).toBeGreaterThanOrEqual(Date.parse(p2.json.items[0].requestedAt));
  });
});

describe('expiry and replicas', () => {
  it('expires requests nobody reads, deleting their arguments, from the background job', async () => {
    const a = (await open(otherRuntime, { to: 'forgotten@elsewhere.example' })).json as Approval;
    await t.deps.database.db
      .updateTable('approval_requests')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', a.id)
      .execute();
    const stop = startApprovalExpiry(t.deps, { everyMs: 10 });
    try {
      let row = await t.deps.database.db.selectFrom('approval_requests').select(['state', 'arguments']).where('id', '=', a.id).executeTakeFirstOrThrow();
      for (let i = 0; i < 200 && row.state === 'pending'; i++) {
        await new Promise((r) => setTimeout(r, 10));
        row = await t.deps.database.db.selectFrom('approval_requests').select(['state', 'arguments']).where('id', '=', a.id).executeTakeFirstOrThrow();
      }
      expect(row).toEqual({ state: 'expired', arguments: null });
    } finally {
      await stop();
    }
  });

  it('wakes a long poll when another replica announces the decision', async () => {
    const a = (await open(otherRuntime, { to: 'elsewhere@replica.example' })).json as Approval;
    const waiting = t.request('GET', `${base}/${a.id}?wait=30`, { token: otherRuntime });
    await new Promise((r) => setTimeout(r, 50));
    // The decision lands in the shared database through another replica, which then notifies this one.
    await t.deps.database.db
      .updateTable('approval_requests')
      .set({ state: 'denied', decided_by: 'user:elsewhere', decided_at: new Date().toISOString(), decision_reason: 'decided on replica b', arguments: null })
      .where('id', '=', a.id)
      .execute();
    t.deps.cluster.receive(JSON.stringify({ replica: randomUUID(), event: { type: 'approval-decided', tenant, id: a.id } }));
    const r = await waiting;
    expect(r.json).toMatchObject({ state: 'denied', decisionReason: 'decided on replica b' });
  });
});

describe('decision records', () => {
  it('keep the approval that let a call through (its id and who gave it), never the arguments', async () => {
    const at = new Date(Date.now() - 1000).toISOString();
    const base = { at, subject: 'agent:research-bot', groups: ['default'], state: 'undefined', tool: 'core__send_email', bundleVersion: 3 };
    const records = [
      { ...base, toolCallId: 'approved-by-person', decision: 'require_approval', approval: { id: randomUUID(), by: 'person' } },
      { ...base, toolCallId: 'confirmed-by-client', decision: 'require_approval', reason: 'client_confirmed', approval: { id: 'client:c1', by: 'client' } },
    ];
    const r = await t.request('POST', `/v1/tenants/${tenant}/decisions`, { token: runtime, body: { runtimeId: 'approvals-test', records } });
    expect(r.status).toBe(202);
    const listed = await t.request('GET', `/v1/tenants/${tenant}/decisions?runtimeId=approvals-test`, { token: editor });
    const byId = Object.fromEntries((listed.json.items as { toolCallId: string }[]).map((i) => [i.toolCallId, i]));
    expect(byId['approved-by-person']).toMatchObject({ approval: { id: records[0].approval.id, by: 'person' } });
    expect(byId['confirmed-by-client']).toMatchObject({ reason: 'client_confirmed', approval: { id: 'client:c1', by: 'client' } });
    const bad = await t.request('POST', `/v1/tenants/${tenant}/decisions`, {
      token: runtime,
      body: { runtimeId: 'approvals-test', records: [{ ...base, toolCallId: 'x', decision: 'allow', approval: { id: 'a', by: 'the-agent' } }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].pointer).toBe('/records/0/approval/by');
  });
});

describe('the receipt’s lifetime', () => {
  it('comes from the role’s approvals.validForSeconds in the published bundle', async () => {
    const current = await t.request('GET', `/v1/tenants/${tenant}/policy`);
    const policy = structuredClone(current.json);
    for (const k of ['tenant', 'version', 'updatedAt', 'createdAt']) delete policy[k];
    policy.roles.researcher.approvals = { by: 'person', validForSeconds: 120 };
    const saved = await t.request('PUT', `/v1/tenants/${tenant}/policy`, { body: policy, headers: { 'if-match': current.headers.get('etag')! } });
    expect(saved.status, saved.text).toBe(200);
    // The published bundle is what runtimes enforce, and so what the receipt follows.
    const published = await t.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'shorter approvals' } });
    expect(published.status, published.text).toBe(201);
    const a = (await open(otherRuntime, { to: 'short@elsewhere.example' })).json as Approval;
    const r = await t.request('POST', `${base}/${a.id}/approve`, { token: editor, body: { reason: 'briefly' } });
    const { approvedAt, expiresAt } = r.json.receipt.payload;
    expect(Date.parse(expiresAt) - Date.parse(approvedAt)).toBe(120_000);
  });
});
