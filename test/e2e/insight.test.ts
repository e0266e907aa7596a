import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { decisionRecord } from '../support/decision-records.ts';
import { startConsole, type Console } from './harness.ts';

// "What can this agent do?" and "who may call this tool?", answered on a page each.
let c: Console;
let page: Page;
const T = 'acme-research';

beforeAll(async () => {
  c = await startConsole();
  const pol = await c.api('GET', `/v1/tenants/${T}/policy`);
  const policy = pol.json;
  policy.roles.analyst.deny = [...(policy.roles.analyst.deny ?? []), 'core__text-completion'];
  policy.roles.researcher.constraints = [
    { tools: ['core__text-completion'], otherwise: 'require_approval', arguments: { type: 'object' }, reason: 'long prompts need a person' },
  ];
  const put = await c.api('PUT', `/v1/tenants/${T}/policy`, policy, { 'if-match': pol.headers.get('etag')! });
  if (put.status !== 200) throw new Error(put.text);
  if ((await c.api('POST', `/v1/tenants/${T}/bundles`, { reason: 'baseline' })).status !== 201) throw new Error('publish failed');
  const token = (await c.api('POST', '/v1/tokens', { label: 'runtime', role: 'runtime', tenants: [T] })).json.token as string;
  const now = Date.now();
  const records = [
    decisionRecord({ at: new Date(now - 60_000).toISOString(), toolCallId: 'call-1', tool: 'core__text-completion' }),
    decisionRecord({
      at: new Date(now - 30_000).toISOString(),
      toolCallId: 'call-2',
      subject: 'agent:analysis-bot',
      tool: 'core__text-completion',
      decision: 'deny',
      errorCode: 'policy_denied',
      reason: 'denied',
    }),
  ];
  const res = await fetch(`${c.url}/v1/tenants/${T}/decisions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ runtimeId: 'worker-insight', records }),
  });
  if (res.status !== 202) throw new Error(await res.text());
  ({ page } = await c.newSession({ width: 1280, height: 1000 }));
  await c.login(page);
});

afterAll(async () => {
  await c?.close();
});

describe('a tool page', () => {
  it("shows which tenants' roles allow, deny or constrain the tool, and its recent decisions", async () => {
    await page.goto(`${c.url}/#/tools/core__text-completion`);
    const panel = page.getByRole('region', { name: 'Where this tool is allowed' });
    const acme = panel.getByRole('region', { name: 'In Acme Research' });
    const roles = acme.getByRole('table', { name: `Roles of ${T} and core__text-completion` });
    await roles.getByRole('row', { name: /researcher\s+allows it\s+long prompts need a person \(otherwise needs approval\)/ }).waitFor();
    await roles.getByRole('row', { name: /analyst\s+denies it/ }).waitFor();
    await acme.getByText(/Reached by agent:research-bot/).waitFor();
    const recent = acme.getByRole('table', { name: `Recent decisions on core__text-completion in ${T}` });
    await recent.getByRole('row', { name: /agent:analysis-bot\s+deny\s+policy_denied/ }).waitFor();
    expect(await recent.getByRole('row').count()).toBe(3);
    await panel.scrollIntoViewIfNeeded();
    await c.shot(page, 'tool-page');
  });

  it('opens the page of an agent that reaches it', async () => {
    const acme = page.getByRole('region', { name: 'Where this tool is allowed' }).getByRole('region', { name: 'In Acme Research' });
    await acme.getByRole('link', { name: 'agent:research-bot' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Agent agent:research-bot' }).waitFor();
  });
});

describe('an agent page', () => {
  it('shows its roles per tenant, what it sees (simulated on the draft) and its recent decisions', async () => {
    const acme = page.getByRole('region', { name: 'In Acme Research' });
    await acme.getByText('researcher', { exact: true }).waitFor();
    const sees = acme.getByRole('table', { name: `Tools agent:research-bot sees in ${T}` });
    await sees.getByRole('row', { name: /core__knowledge-query\s+allow/ }).waitFor();
    const hidden = acme.getByRole('table', { name: `Tools hidden from agent:research-bot in ${T}` });
    expect(await hidden.getByRole('row').count()).toBeGreaterThan(1);
    const recent = acme.getByRole('table', { name: `Recent decisions of agent:research-bot in ${T}` });
    await recent.getByRole('row', { name: /core__text-completion\s+allow/ }).waitFor();
    // The agent's view agrees with the simulator.
    const groups = (await c.api('GET', `/v1/subjects/${encodeURIComponent('agent:research-bot')}`)).json.tenants[0].groups;
    const sim = await c.api('POST', `/v1/tenants/${T}/simulate`, { subject: 'agent:research-bot', groups });
    expect(await sees.getByRole('row').count()).toBe(sim.json.tools.length + 1);
    await c.shot(page, 'agent-page');
  });

  it('lists the agents and looks one up by name, saying so when it is bound nowhere', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
    const list = page.getByRole('table', { name: 'Agents' });
    await list.getByRole('row', { name: /agent:coding-bot\s+globex-eng/ }).waitFor();
    await page.getByLabel('Subject').fill('agent:nobody');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('agent:nobody is bound to no role in a tenant you can read, and has no logged decision there.').waitFor();
  });
});
