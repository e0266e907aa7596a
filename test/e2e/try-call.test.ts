// The simulator's "Try a call": an admin tries arguments against the draft's argument constraints.
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startConsole, type Console } from './harness.ts';

let c: Console;
let page: Page;

beforeAll(async () => {
  c = await startConsole();
  const current = await c.api('GET', '/v1/tenants/acme-research/policy');
  const policy = current.json;
  delete policy.version;
  delete policy.updatedAt;
  policy.roles.analyst.constraints = [
    {
      tools: ['core__knowledge-*'],
      otherwise: 'deny',
      arguments: { properties: { query: { type: 'string', pattern: '^[a-z ]*$' } } },
      reason: 'queries are plain lowercase words',
    },
  ];
  const saved = await c.api('PUT', '/v1/tenants/acme-research/policy', policy, {
    'if-match': current.headers.get('etag')!,
    'toolgate-reason': 'constraint for the test',
  });
  if (saved.status !== 200) throw new Error(`saving the policy failed: ${saved.text}`);
  ({ page } = await c.newSession());
  await page.goto(`${c.url}/`);
  await c.login(page);
});

afterAll(async () => {
  await c?.close();
});

describe('the simulator tries a call', () => {
  it('shows the decision, the error code and the constraint that decided, for arguments typed as JSON', async () => {
    await page.goto(`${c.url}/#/tenants/acme-research`);
    const sim = page.getByRole('region', { name: 'Simulator' });
    await sim.getByLabel('Subject').fill('agent:analysis-bot');
    await sim.getByLabel('Requested groups').fill('knowledge');
    const visible = sim.getByRole('table', { name: 'Visible tools' });
    // The visible tool says which constraints check its arguments.
    await visible
      .getByRole('row', { name: /core__knowledge-query\s+allow\s+· arguments checked: queries are plain lowercase words \(else denied\)/ })
      .waitFor();

    const form = sim.getByRole('form', { name: 'Try a call' });
    await form.getByLabel('Tool').fill('core__knowledge-query');
    await form.getByLabel('Arguments (JSON)').fill('{"query":"DROP TABLE users"}');
    await form.getByRole('button', { name: 'Try' }).click();
    const outcome = sim.getByRole('status', { name: 'Call decision' });
    await outcome.getByText('deny', { exact: true }).waitFor();
    await outcome.getByText('policy_denied', { exact: true }).waitFor();
    await outcome.getByText('Decided by constraint 0 of role analyst (deny): queries are plain lowercase words').waitFor();

    await form.getByLabel('Arguments (JSON)').fill('{"query":"revenue by region"}');
    await form.getByRole('button', { name: 'Try' }).click();
    await outcome.getByText('allow', { exact: true }).waitFor();

    // Arguments that are not JSON are answered as a runtime would answer them.
    await form.getByLabel('Arguments (JSON)').fill('{"query":');
    await form.getByRole('button', { name: 'Try' }).click();
    await outcome.getByText('invalid_json', { exact: true }).waitFor();
    await c.shot(page, 'simulator-try-a-call');
  });

  it("edits a role's constraints as JSON, shows the judge's refusal at its pointer, and saves a valid one", async () => {
    await page.goto(`${c.url}/#/tenants/acme-research`);
    const role = page.getByRole('region', { name: 'Role researcher' });
    const json = role.getByLabel('Argument constraints of researcher (JSON)');
    await json.fill('[{ "tools": ["core__text-*"]');
    await role
      .getByRole('alert')
      .getByText(/not JSON/)
      .waitFor();
    const bad = [
      { tools: ['core__text-*'], otherwise: 'require_approval', arguments: { properties: { prompt: { pattern: '(?<=a)b' } } }, reason: 'short prompts only' },
    ];
    await json.fill(JSON.stringify(bad));
    await page.getByLabel('Reason for this change').fill('Long prompts need a person');
    await page.getByRole('button', { name: 'Save draft', exact: true }).click();
    await role.getByText('/roles/researcher/constraints/0/arguments/properties/prompt/pattern').waitFor();

    const good = [{ ...bad[0], arguments: { properties: { prompt: { maxLength: 200 } } } }];
    await json.fill(JSON.stringify(good));
    await page.getByRole('button', { name: 'Save draft', exact: true }).click();
    await page.getByText(/Draft saved/).waitFor();
    await role
      .getByRole('table', { name: 'Argument constraints of researcher' })
      .getByRole('row', { name: /core__text-\*\s+require approval\s+short prompts only/ })
      .waitFor();
    const saved = (await c.api('GET', '/v1/tenants/acme-research/policy')).json;
    if (JSON.stringify(saved.roles.researcher.constraints) !== JSON.stringify(good))
      throw new Error(`saved ${JSON.stringify(saved.roles.researcher.constraints)}`);
  });

  it('shows beside the diff the constraints a draft would stop applying to logged calls', async () => {
    // Published with the constraint, then logged: calls the constraint checked.
    const published = await c.api('POST', '/v1/tenants/acme-research/bundles', { reason: 'constraints live' });
    if (published.status !== 201) throw new Error(`publish failed: ${published.text}`);
    const token = (await c.api('POST', '/v1/tokens', { label: 'runtime', role: 'runtime', tenants: ['acme-research'] })).json.token as string;
    const records = Array.from({ length: 4 }, (_, i) => ({
      at: new Date(Date.now() - 60_000 - i).toISOString(),
      toolCallId: `logged-${i}`,
      subject: 'agent:analysis-bot',
      groups: ['knowledge'],
      state: 'undefined',
      tool: 'core__knowledge-query',
      decision: 'allow',
      bundleVersion: published.json.version,
    }));
    const logged = await fetch(`${c.url}/v1/tenants/acme-research/decisions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ runtimeId: 'worker-constraints', records }),
    });
    if (logged.status !== 202) throw new Error(`could not log decisions: ${await logged.text()}`);
    const current = await c.api('GET', '/v1/tenants/acme-research/policy');
    const draft = current.json;
    draft.roles.analyst.constraints = [];
    const saved = await c.api('PUT', '/v1/tenants/acme-research/policy', draft, {
      'if-match': current.headers.get('etag')!,
      'toolgate-reason': 'drop the query constraint',
    });
    if (saved.status !== 200) throw new Error(`saving failed: ${saved.text}`);

    await page.goto(`${c.url}/#/tenants/acme-research/publish`);
    const changed = page.getByRole('list', { name: 'Changed argument constraints' });
    await changed
      .getByRole('listitem')
      .filter({
        hasText:
          /4 logged call\(s\) to core__knowledge-query would no longer be checked by constraint 0 of role analyst \(else denied: queries are plain lowercase words\)/,
      })
      .waitFor();
  });
});
