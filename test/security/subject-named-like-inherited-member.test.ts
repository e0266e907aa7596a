import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../policy-schemas/types.gen.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// The attack: a subject named like a member every JavaScript object inherits (constructor,
// __proto__, toString), in an approval request a runtime opens or on the subject page. Looking
// its roles up in the policy's bindings must find none, not the inherited function (a 500).
const tenant = 'acme-research';
let t: TestApp;
let runtime: string;
let editor: string;

beforeAll(async () => {
  t = await startTestApp();
  runtime = await t.tokenFor('runtime', [tenant]);
  editor = await t.tokenFor('editor', [tenant]);
});
afterAll(() => t?.close());

describe('approval for a subject named like an inherited member', () => {
  for (const subject of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    it(`approves a request for subject ${subject} with the default receipt lifetime`, async () => {
      const opened = await t.request('POST', `/v1/tenants/${tenant}/approvals`, {
        token: runtime,
        body: { subject, tool: 'core__send_email', arguments: { to: 'a@b.example' }, reason: 'mail needs a person' },
      });
      expect(opened.status, opened.text).toBe(201);
      const id = (opened.json as Approval).id;
      const decided = await t.request('POST', `/v1/tenants/${tenant}/approvals/${id}/approve`, { token: editor, body: { reason: 'fine' } });
      expect(decided.status, decided.text).toBe(200);
      const receipt = (decided.json as Approval).receipt ?? (await t.request('GET', `/v1/tenants/${tenant}/approvals/${id}`, { token: runtime })).json.receipt;
      expect(receipt.payload.subject).toBe(subject);
      expect(Date.parse(receipt.payload.expiresAt) - Date.parse(receipt.payload.approvedAt)).toBe(900_000);
    });

    it(`answers the subject page of ${subject} as bound to no role`, async () => {
      const r = await t.request('GET', `/v1/subjects/${encodeURIComponent(subject)}`, { token: editor });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({ subject });
      // A subject bound to no role and never decided is listed in no tenant; the inherited
      // function found as its roles would list it (with its arity as a length), so the loop
      // below alone, running over nothing, would not notice.
      const views = r.json.tenants as Array<{ tenant: string; roles: string[] }>;
      expect(views).toEqual([]);
      for (const view of views) expect(view.roles).toEqual([]);
    });
  }
});
