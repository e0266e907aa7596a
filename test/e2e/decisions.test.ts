import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { DecisionRecord } from '../../policy-schemas/types.gen.ts';
import { startConsole, type Console } from './harness.ts';
import { decisionRecord } from '../support/decision-records.ts';

let c: Console;
let page: Page;
const tenant = 'acme-research';

/** `n` calls as a runtime would log them, spread over the last 18 hours. */
function calls(n: number, over: Partial<DecisionRecord>): DecisionRecord[] {
  return Array.from({ length: n }, (_, i) =>
    decisionRecord({
      at: new Date(Date.now() - 5 * 60_000 - ((i * 7) % 12) * 90 * 60_000 - i).toISOString(),
      toolCallId: `${over.tool}-${over.subject}-${i}`,
      ...over,
    }),
  );
}

beforeAll(async () => {
  c = await startConsole();
  const published = await c.api('POST', `/v1/tenants/${tenant}/bundles`, { reason: 'baseline for the decisions tests' });
  if (published.status !== 201) throw new Error(`baseline publish failed: ${published.text}`);
  const token = (await c.api('POST', '/v1/tokens', { label: 'runtime', role: 'runtime', tenants: [tenant] })).json.token as string;
  const records = [
    ...calls(312, { subject: 'agent:research-bot', tool: 'core__knowledge-query' }),
    ...calls(40, { subject: 'agent:analysis-bot', tool: 'core__knowledge-query' }),
    ...calls(9, {
      subject: 'agent:research-bot',
      tool: 'core__graph-update',
      decision: 'deny',
      errorCode: 'policy_denied',
      reason: 'group',
      facts: { hostSession: 'ready' },
    }),
  ];
  const res = await fetch(`${c.url}/v1/tenants/${tenant}/decisions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ runtimeId: 'worker-e2e', records }),
  });
  if (res.status !== 202) throw new Error(`could not log decisions: ${await res.text()}`);
  ({ page } = await c.newSession());
  await c.login(page);
});

const simForm = () => page.getByRole('form', { name: 'Simulation request' });

afterAll(async () => {
  await c?.close();
});

describe('decision logs and impact analysis in the console', () => {
  it('shows beside the diff exactly the logged calls a draft would deny', async () => {
    const policy = await c.api('GET', `/v1/tenants/${tenant}/policy`);
    const draft = structuredClone(policy.json);
    draft.roles.researcher.deny = ['core__knowledge-query'];
    const saved = await c.api('PUT', `/v1/tenants/${tenant}/policy`, draft, {
      'if-match': `"${policy.json.version}"`,
      'toolgate-reason': 'researchers stop querying knowledge',
    });
    expect(saved.status).toBe(200);

    await page.goto(`${c.url}/#/tenants/${tenant}/publish`);
    const changes = page.getByRole('list', { name: 'Changed decisions' });
    await changes.waitFor();
    const items = changes.getByRole('listitem');
    expect(await items.count()).toBe(1);
    expect((await items.first().innerText()).replace(/\s+/g, ' ')).toContain(
      '312 call(s) of agent:research-bot to core__knowledge-query last week would now be denied (denied).',
    );
    expect(await page.getByRole('status').filter({ hasText: 'would now be denied' }).innerText()).toContain('312 call(s) would now be denied, 0 allowed');
    await c.shot(page, 'publish-impact');

    // An example opens the simulator on the logged request, where the draft hides the tool.
    await items.first().getByRole('link', { name: 'Open an example in the simulator' }).click();
    await expect.poll(() => simForm().getByLabel('Subject').inputValue()).toBe('agent:research-bot');
    await page
      .getByRole('table', { name: 'Filtered tools' })
      .getByRole('row', { name: /core__knowledge-query/ })
      .waitFor();
  });

  it('shows the decisions view: histogram, most denied tools and subjects, and a denial opening the simulator', async () => {
    await page.goto(`${c.url}/#/tenants/${tenant}/decisions`);
    const chart = page.getByRole('img', { name: /Decisions over time/ });
    await chart.waitFor();
    expect(await page.locator('figcaption').innerText()).toContain('352 allow, 0 require_approval, 9 deny');
    const topTools = page.getByRole('table', { name: 'Most denied tools' });
    expect((await topTools.getByRole('row').nth(1).innerText()).replace(/\s+/g, ' ')).toContain('core__graph-update 9 group (9)');
    expect(await page.getByRole('table', { name: 'Most denied subjects' }).getByRole('row').nth(1).innerText()).toContain('agent:research-bot');
    await c.shot(page, 'decisions');
    const unlabeled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea')]
        .filter((el) => !((el as HTMLInputElement).labels?.length || el.getAttribute('aria-label')))
        .map((el) => `${el.tagName.toLowerCase()}#${el.id}`),
    );
    expect(unlabeled).toEqual([]);

    await page.getByLabel('Decision', { exact: true }).selectOption('deny');
    const rows = page.getByRole('table', { name: 'Decision records' }).getByRole('row');
    await expect.poll(() => rows.count()).toBe(10);
    await rows
      .nth(1)
      .getByRole('link', { name: /Open in simulator/ })
      .click();
    await expect.poll(() => simForm().getByLabel('Subject').inputValue()).toBe('agent:research-bot');
    expect(await simForm().getByLabel('Facts').inputValue()).toBe('hostSession=ready');
    await page
      .getByRole('table', { name: 'Filtered tools' })
      .getByRole('row', { name: /core__graph-update/ })
      .waitFor();
  });
});
