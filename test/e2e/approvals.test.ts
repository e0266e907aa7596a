import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../policy-schemas/types.gen.ts';
import { type Console, startConsole } from './harness.ts';

let c: Console;
let runtime: string;
let editor: string;
let viewer: string;

beforeAll(async () => {
  c = await startConsole();
  const token = async (role: string, tenants: string[]) =>
    (await c.api('POST', '/v1/tokens', { label: `${role} for approvals`, role, tenants })).json.token as string;
  runtime = await token('runtime', ['acme-research']);
  editor = await token('editor', ['acme-research']);
  viewer = await token('viewer', ['acme-research']);
});

afterAll(async () => {
  await c?.close();
});

async function ask(to: string): Promise<Approval> {
  const res = await fetch(`${c.url}/v1/tenants/acme-research/approvals`, {
    method: 'POST',
    headers: { authorization: `Bearer ${runtime}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      subject: 'agent:research-bot',
      tool: 'core__send_email',
      arguments: { to, subject: 'Quarterly numbers' },
      reason: 'constraint researcher#0: mail outside the company needs a person',
    }),
  });
  return (await res.json()) as Approval;
}

async function signedIn(token: string): Promise<Page> {
  const { page } = await c.newSession();
  await c.login(page, token);
  return page;
}

describe('the approval queue in the console', () => {
  it('shows an editor the waiting call with its arguments and the rule that asked, and approves it with a reason', async () => {
    const request = await ask('buyer@customer.example');
    const page = await signedIn(editor);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Approvals' }).click();
    const queue = page.getByRole('region', { name: 'Approval requests in acme-research' });
    const card = queue.getByRole('listitem').filter({ hasText: request.id });
    await expect.poll(() => card.getByRole('heading', { name: 'agent:research-bot wants to call core__send_email' }).count()).toBe(1);
    expect(await card.textContent()).toContain('buyer@customer.example');
    expect(await card.textContent()).toContain('mail outside the company needs a person');
    await c.shot(page, 'approvals');
    // Only the tenant this editor decides for is shown.
    expect(await page.getByRole('region', { name: 'Approval requests in globex-eng' }).count()).toBe(0);

    await card.getByRole('button', { name: 'Approve this call' }).click();
    await card.getByText('Say why: the reason goes into the audit log with your decision.').waitFor();
    await card.getByLabel('Reason for your decision').fill('the customer asked for the numbers');
    await card.getByRole('button', { name: 'Approve this call' }).click();
    await queue.getByText('Approved: agent:research-bot → core__send_email may run once.').waitFor();
    const decided = await c.api('GET', `/v1/tenants/acme-research/approvals/${request.id}`);
    expect(decided.json).toMatchObject({ state: 'approved', decisionReason: 'the customer asked for the numbers' });
    expect(decided.json.receipt.payload.approvedBy).toMatch(/^token:/);
  });

  it('denies with a reason, and shows the empty state once nothing waits', async () => {
    const request = await ask('everyone@list.example');
    const page = await signedIn(editor);
    await page.goto(`${c.url}/#/approvals?tenant=acme-research&id=${request.id}`);
    const card = page.getByRole('listitem').filter({ hasText: request.id });
    await card.getByLabel('Reason for your decision').fill('not to a mailing list');
    await card.getByRole('button', { name: 'Deny' }).click();
    await page.getByText('Denied: agent:research-bot → core__send_email.').waitFor();
    await page.getByText('No call is waiting for approval in acme-research.').waitFor();
    expect((await c.api('GET', `/v1/tenants/acme-research/approvals/${request.id}`)).json.state).toBe('denied');
  });

  it('offers no queue to a viewer, who may not decide', async () => {
    const page = await signedIn(viewer);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Approvals' }).count()).toBe(0);
    await page.goto(`${c.url}/#/approvals`);
    await page.getByText('You may not decide approval requests in any tenant').waitFor();
  });
});
