import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, startConsole, type Console } from './harness.ts';

// A second person before release, and promotion between tenants, as an editor and an admin do them.
let c: Console;
let admin: Page;
let editorPage: Page;
let editorToken: string;
const T = 'acme-research';

async function editPolicy(token: string, change: (p: Record<string, any>) => void) {
  const cur = await fetch(`${c.url}/v1/tenants/${T}/policy`, { headers: { authorization: `Bearer ${token}` } });
  const policy = await cur.json();
  change(policy);
  const r = await fetch(`${c.url}/v1/tenants/${T}/policy`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'if-match': cur.headers.get('etag')!, 'toolgate-reason': 'e2e edit' },
    body: JSON.stringify(policy),
  });
  if (r.status !== 200) throw new Error(`policy edit failed: ${await r.text()}`);
}

beforeAll(async () => {
  c = await startConsole();
  const baseline = await c.api('POST', `/v1/tenants/${T}/bundles`, { reason: 'baseline' });
  if (baseline.status !== 201) throw new Error(baseline.text);
  const minted = await c.api('POST', '/v1/tokens', { label: 'Erin (editor)', role: 'editor', tenants: [T] });
  editorToken = minted.json.token;
  ({ page: admin } = await c.newSession({ width: 1280, height: 1000 }));
  ({ page: editorPage } = await c.newSession({ width: 1280, height: 1000 }));
  await c.login(admin);
  await c.login(editorPage, editorToken);
});

afterAll(async () => {
  await c?.close();
});

describe('publish review in the console', () => {
  it("sends an editor's publish for review when the tenant asks for a second person", async () => {
    await editPolicy(ADMIN_TOKEN, (p) => {
      p.review = { publish: 'required', approvals: 1 };
    });
    await editPolicy(editorToken, (p) => {
      p.roles.researcher.deny = ['core__text-completion'];
    });
    await editorPage.goto(`${c.url}/#/tenants/${T}/publish`);
    const form = editorPage.getByRole('form', { name: 'Publish' });
    await form.getByText(/asks for a second person/).waitFor();
    await form.getByLabel('Reason for publishing (required)').fill('researchers stop completing text');
    await form.getByRole('button', { name: 'Ask for review' }).click();
    await editorPage
      .getByRole('status')
      .getByText(/Sent for review/)
      .waitFor();
    expect((await c.api('GET', `/v1/tenants/${T}/bundles`)).json.items).toHaveLength(1);

    // The publish card lists what waits for review.
    await editorPage
      .getByRole('list', { name: 'Publish requests waiting for review' })
      .getByRole('link', { name: 'Publish, asked by Erin (editor)' })
      .waitFor();
    await editorPage.getByRole('link', { name: 'Open the publish request' }).click();
    const review = editorPage.getByRole('form', { name: 'Review' });
    await review.getByText(/You asked for this publish/).waitFor();
    expect(await review.getByRole('button', { name: 'Approve and publish' }).isDisabled()).toBe(true);
  });

  it('shows the queue on Home and lets another person review the diff, impact and tests, then approve', async () => {
    // Home was open since sign-in: a person comes back to it later.
    await admin.goto(`${c.url}/#/`);
    await admin.reload();
    const queue = admin.getByRole('region', { name: /Publish requests waiting for review/ });
    await queue.getByRole('heading', { name: 'Publish requests waiting for review (1)' }).waitFor();
    await queue.getByRole('link', { name: `${T}: publish the draft` }).click();

    const byRole = admin.getByRole('table', { name: 'Changes under review: summary by role' });
    await byRole.getByRole('row', { name: /researcher\s+0 tool\(s\)\s+1 tool\(s\)/ }).waitFor();
    await admin.getByRole('group', { name: 'Changes under review' }).getByText('Details: every tool and decision').click();
    await admin.getByRole('table', { name: 'Changes under review: roles' }).getByText('− core__text-completion').waitFor();
    await admin.getByRole('heading', { name: 'Impact on logged traffic' }).waitFor();
    await admin.getByRole('heading', { name: 'Policy tests on the reviewed content' }).waitFor();
    await admin.getByText(/Asked by Erin \(editor\) on/).waitFor();
    await c.shot(admin, 'publish-review');

    const review = admin.getByRole('form', { name: 'Review' });
    // A rejection needs a reason, said at the field.
    await review.getByRole('button', { name: 'Reject' }).click();
    await review.getByText('Say why you reject it: the requester reads this.').waitFor();
    expect(await review.getByLabel('Reason for your decision (required to reject)').getAttribute('aria-invalid')).toBe('true');

    await review.getByLabel('Reason for your decision (required to reject)').fill('checked with the research team');
    await review.getByRole('button', { name: 'Approve and publish' }).click();
    await admin.getByRole('status').getByText('Approved: published as v2.').waitFor();
    const versions = (await c.api('GET', `/v1/tenants/${T}/bundles`)).json.items;
    expect(versions).toHaveLength(2);

    // The history says who asked and who approved.
    await admin.goto(`${c.url}/#/tenants/${T}/publish`);
    const row = admin.getByRole('table', { name: 'Versions' }).getByRole('row', { name: /^v2/ });
    await row.getByText(/asked by Erin \(editor\), approved by bootstrap admin/).waitFor();
  });

  it('marks a request stale when the draft changes, and approving it publishes nothing', async () => {
    await editPolicy(editorToken, (p) => {
      p.roles.researcher.deny = [];
    });
    const asked = await fetch(`${c.url}/v1/tenants/${T}/bundles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${editorToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'give it back' }),
    });
    const request = await asked.json();
    expect(asked.status).toBe(202);
    await editPolicy(editorToken, (p) => {
      p.roles.analyst.deny = ['core__reset-workflow', 'core__text-completion'];
    });
    await admin.goto(`${c.url}/#/tenants/${T}/reviews/${request.id}`);
    await admin
      .getByRole('alert')
      .getByText(/The draft changed since this was asked/)
      .waitFor();
    expect(await admin.getByRole('button', { name: 'Approve and publish' }).isDisabled()).toBe(true);
    await admin.getByLabel('Reason for your decision (required to reject)').fill('superseded by the analyst change');
    await admin.getByRole('button', { name: 'Reject' }).click();
    await admin
      .getByRole('status')
      .getByText(/Rejected; the requester sees your reason/)
      .waitFor();
    expect((await c.api('GET', `/v1/tenants/${T}/publish-requests/${request.id}`)).json.status).toBe('rejected');
  });
});

describe('an emergency publish in the console', () => {
  it('lets an admin publish at once past the review, with a reason, audited as an emergency', async () => {
    await editPolicy(ADMIN_TOKEN, (p) => {
      p.roles.analyst.deny = ['core__reset-workflow'];
    });
    await admin.goto(`${c.url}/#/tenants/${T}/publish`);
    await admin.reload();
    const form = admin.getByRole('form', { name: 'Publish' });
    await form.getByRole('button', { name: 'Ask for review' }).waitFor();
    await form.getByRole('checkbox', { name: /Emergency: publish now without a second person/ }).check();
    await form.getByLabel('Reason for publishing (required)').fill('incident 7: put the analysts back');
    await form.getByRole('button', { name: 'Publish', exact: true }).click();
    await admin
      .getByRole('status')
      .getByText(/^Published version \d+\.$/)
      .waitFor();
    const events = (await c.api('GET', '/v1/audit?entityType=bundle&action=publish')).json.items as { after: { emergency?: boolean }; reason: string }[];
    expect(events.at(-1)).toMatchObject({ reason: 'incident 7: put the analysts back', after: { emergency: true } });
  });
});

describe('promote in the console', () => {
  it('shows the plan first, then copies into the target draft', async () => {
    await admin.goto(`${c.url}/#/tenants/${T}/publish`);
    const panel = admin.getByRole('region', { name: 'Promote to…' });
    await panel.getByLabel('Target tenant').selectOption('globex-eng');
    const plan = panel.getByRole('list', { name: "What changes in the target's draft" });
    await plan.getByText(/Roles:.*added researcher, analyst.*removed coder, reviewer/).waitFor();
    await plan.getByText(/Connection grants:.*added conn-knowledge-graph-prod/).waitFor();
    expect((await c.api('GET', '/v1/tenants/globex-eng/policy')).json.roles).toHaveProperty('coder');
    await panel.scrollIntoViewIfNeeded();
    await c.shot(admin, 'promote-plan');
    const form = panel.getByRole('form', { name: 'Promote to globex-eng' });
    expect(await form.getByRole('button', { name: 'Promote to globex-eng' }).isDisabled()).toBe(true);
    await form.getByLabel('Reason for promoting (required)').fill('staging is good');
    await form.getByRole('button', { name: 'Promote to globex-eng' }).click();
    await panel
      .getByRole('status')
      .getByText(/Promoted: globex-eng's draft now carries/)
      .waitFor();
    const target = (await c.api('GET', '/v1/tenants/globex-eng/policy')).json;
    expect(Object.keys(target.roles).sort()).toEqual(['analyst', 'researcher']);
    await plan.getByText(/Roles:\s*no change/).waitFor();
  });
});
