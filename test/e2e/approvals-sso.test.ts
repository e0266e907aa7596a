import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../policy-schemas/types.gen.ts';
import { ADMIN_TOKEN, type Console, signInThroughProvider, startConsole, startSsoForConsole } from './harness.ts';

// With single sign-on configured the server takes approval decisions from a person signed in
// through it alone (and never from whoever asked): the console offers the buttons only to them,
// and tells everyone else why not instead of letting them run into a 403.
let c: Console;
let op: Awaited<ReturnType<typeof startSsoForConsole>>;
let runtime: string;
let editor: string;
const ada = { sub: 'ada-1815', email: 'ada@example.com', name: 'Ada Lovelace', groups: ['acme-editors'], emailVerified: true };
const PERSON_ONLY = 'Only a person signed in through single sign-on may decide approvals on this server.';

beforeAll(async () => {
  c = await startConsole();
  op = await startSsoForConsole(c, [ada]);
  const token = async (role: string, tenants: string[]) =>
    (await c.api('POST', '/v1/tokens', { label: `${role} for approvals`, role, tenants })).json.token as string;
  runtime = await token('runtime', ['acme-research']);
  editor = await token('editor', ['acme-research']);
});

afterAll(async () => {
  await c?.close();
  await op?.close();
});

async function ask(to: string, asker = runtime): Promise<Approval> {
  const res = await fetch(`${c.url}/v1/tenants/acme-research/approvals`, {
    method: 'POST',
    headers: { authorization: `Bearer ${asker}`, 'content-type': 'application/json' },
    body: JSON.stringify({ subject: 'agent:research-bot', tool: 'core__send_email', arguments: { to }, reason: 'mail outside the company needs a person' }),
  });
  if (res.status !== 201) throw new Error(`ask: ${await res.text()}`);
  return (await res.json()) as Approval;
}

async function cardOf(page: Page, request: Approval) {
  await page.goto(`${c.url}/#/approvals?tenant=acme-research&id=${request.id}`);
  const card = page.getByRole('region', { name: 'Approval requests in acme-research' }).getByRole('listitem').filter({ hasText: request.id });
  await card.getByRole('heading', { name: 'agent:research-bot wants to call core__send_email' }).waitFor();
  return card;
}

describe('approval buttons with single sign-on configured', () => {
  it('shows an editor signed in with a token the queue and why they may not decide, without buttons', async () => {
    const request = await ask('buyer@customer.example');
    const { context, page } = await c.newSession();
    try {
      await c.login(page, editor);
      const card = await cardOf(page, request);
      await card.getByText(PERSON_ONLY).waitFor();
      expect(await card.textContent()).toContain('buyer@customer.example');
      expect(await card.getByRole('button', { name: 'Approve this call' }).count()).toBe(0);
      expect(await card.getByRole('button', { name: 'Deny' }).count()).toBe(0);
      expect(await card.getByLabel('Reason for your decision').count()).toBe(0);
      await page
        .getByRole('note')
        .getByText(/Sign out and sign in with SSO to decide/)
        .waitFor();
      expect((await c.api('GET', `/v1/tenants/acme-research/approvals/${request.id}`)).json.state).toBe('pending');
    } finally {
      await context.close();
    }
  });

  it('tells whoever asked that another person must decide', async () => {
    const request = await ask('self@elsewhere.example', ADMIN_TOKEN);
    const { context, page } = await c.newSession();
    try {
      await c.login(page, ADMIN_TOKEN);
      const card = await cardOf(page, request);
      await card.getByText('You asked for this approval yourself: another person must decide it.').waitFor();
      expect(await card.getByRole('button', { name: 'Approve this call' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('offers a person signed in through single sign-on the buttons, and takes their approval', async () => {
    const request = await ask('partner@customer.example');
    const { context, page } = await c.newSession();
    try {
      await signInThroughProvider(page, c.url, ada.sub);
      await page.getByRole('banner').getByText('Ada Lovelace').waitFor();

      const card = await cardOf(page, request);
      expect(await page.getByText(PERSON_ONLY).count()).toBe(0);
      await card.getByLabel('Reason for your decision').fill('the partner expects it');
      await card.getByRole('button', { name: 'Approve this call' }).click();
      await page.getByText('Approved: agent:research-bot → core__send_email may run once.').waitFor();
      const decided = await c.api('GET', `/v1/tenants/acme-research/approvals/${request.id}`);
      expect(decided.json).toMatchObject({ state: 'approved', decidedBy: `user:${ada.sub}` });
    } finally {
      await context.close();
    }
  });
});
