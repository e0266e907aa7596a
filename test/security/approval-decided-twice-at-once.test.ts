import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../policy-schemas/types.gen.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// The attack: two people (or one person twice) decide the same approval request at the same
// moment, hoping for two receipts, or for an approval to land after a denial. Exactly one
// decision stands; the other is a 409 and issues nothing.
const tenant = 'acme-research';
let t: TestApp;
let runtime: string;
let editors: string[];

beforeAll(async () => {
  t = await startTestApp();
  runtime = await t.tokenFor('runtime', [tenant]);
  editors = [await t.tokenFor('editor', [tenant]), await t.tokenFor('editor', [tenant]), await t.tokenFor('editor', [tenant])];
});
afterAll(() => t?.close());

async function open(): Promise<string> {
  const r = await t.request('POST', `/v1/tenants/${tenant}/approvals`, {
    token: runtime,
    body: { subject: 'agent:research-bot', tool: 'core__send_email', arguments: { to: 'x@elsewhere.example' }, reason: 'mail needs a person' },
  });
  expect(r.status, r.text).toBe(201);
  return (r.json as Approval).id;
}

describe('one approval request decided several times at once', () => {
  it('lets exactly one of three simultaneous approvals stand, with one receipt', async () => {
    const id = await open();
    const answers = await Promise.all(
      editors.map((token, i) => t.request('POST', `/v1/tenants/${tenant}/approvals/${id}/approve`, { token, body: { reason: `yes ${i}` } })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const winner = answers.find((a) => a.status === 200)!.json as Approval;
    const now = (await t.request('GET', `/v1/tenants/${tenant}/approvals/${id}`, { token: runtime })).json as Approval;
    expect(now.state).toBe('approved');
    expect(now.decidedBy).toBe(winner.decidedBy);
    expect(now.receipt?.payload.approvedBy).toBe(winner.decidedBy);
  });

  it('never turns a denial into an approval when both arrive together', async () => {
    const id = await open();
    const [approve, deny] = await Promise.all([
      t.request('POST', `/v1/tenants/${tenant}/approvals/${id}/approve`, { token: editors[0], body: { reason: 'yes' } }),
      t.request('POST', `/v1/tenants/${tenant}/approvals/${id}/deny`, { token: editors[1], body: { reason: 'no' } }),
    ]);
    expect([approve.status, deny.status].sort()).toEqual([200, 409]);
    const now = (await t.request('GET', `/v1/tenants/${tenant}/approvals/${id}`, { token: runtime })).json as Approval;
    expect(now.state).toBe(approve.status === 200 ? 'approved' : 'denied');
    expect(now.receipt === undefined).toBe(now.state === 'denied');
  });
});
