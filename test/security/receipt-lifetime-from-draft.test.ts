import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../policy-schemas/types.gen.ts';
import { editPolicy } from '../support/edit-policy.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// The attack: an editor saves a draft policy giving the role a day-long `approvals.validForSeconds`
// and never publishes it (nothing a runtime enforces changes, no review, no tests run). If the
// server took the receipt's lifetime from that draft, every receipt approved meanwhile would
// outlive what the published policy allows. The lifetime comes from the latest published bundle.
const tenant = 'acme-research';
const base = `/v1/tenants/${tenant}/approvals`;
let t: TestApp;
let runtime: string;
let editor: string;

beforeAll(async () => {
  t = await startTestApp();
  runtime = await t.tokenFor('runtime', [tenant]);
  editor = await t.tokenFor('editor', [tenant]);
});
afterAll(() => t?.close());

const saveLifetime = (seconds: number) =>
  editPolicy(
    t,
    tenant,
    (policy) => {
      policy.roles.researcher.approvals = { by: 'person', validForSeconds: seconds };
    },
    { token: editor },
  );

async function approvedLifetimeMs(to: string): Promise<number> {
  const opened = await t.request('POST', base, {
    token: runtime,
    body: { subject: 'agent:research-bot', tool: 'core__send_email', arguments: { to }, reason: 'mail needs a person' },
  });
  expect(opened.status, opened.text).toBe(201);
  const r = await t.request('POST', `${base}/${(opened.json as Approval).id}/approve`, { token: editor, body: { reason: 'fine' } });
  expect(r.status, r.text).toBe(200);
  const { approvedAt, expiresAt } = (r.json as Approval).receipt!.payload;
  return Date.parse(expiresAt) - Date.parse(approvedAt);
}

describe('a receipt’s lifetime', () => {
  it('ignores a longer validForSeconds saved in the draft and not published', async () => {
    const published = await t.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'baseline' } });
    expect([200, 201]).toContain(published.status);
    await saveLifetime(86_400);
    expect(await approvedLifetimeMs('a@elsewhere.example')).toBe(900_000);
  });

  it('follows validForSeconds once it is published', async () => {
    await saveLifetime(120);
    const published = await t.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'shorter approvals' } });
    expect(published.status, published.text).toBe(201);
    expect(await approvedLifetimeMs('b@elsewhere.example')).toBe(120_000);
    // A draft that shortens it again is not in force either: the published 120 s still holds.
    await saveLifetime(60);
    expect(await approvedLifetimeMs('c@elsewhere.example')).toBe(120_000);
  });
});
