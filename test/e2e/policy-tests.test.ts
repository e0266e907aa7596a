import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startConsole, type Console } from './harness.ts';

let c: Console;
let page: Page;

beforeAll(async () => {
  c = await startConsole();
  const baseline = await c.api('POST', '/v1/tenants/acme-research/bundles', { reason: 'baseline for the policy-test console tests' });
  if (baseline.status !== 201) throw new Error(`baseline publish failed: ${baseline.text}`);
  ({ page } = await c.newSession());
  await c.login(page);
});

afterAll(async () => {
  await c?.close();
});

const go = (path: string) => page.goto(`${c.url}/#${path}`);
const testStatus = () => page.getByRole('status', { name: 'Policy test status' });

describe('policy tests in the console', () => {
  it("saves as a test only what the admin chose to assert of the simulator's answer", async () => {
    await go('/tenants/acme-research');
    const sim = page.getByRole('region', { name: 'Simulator' });
    await sim.getByRole('button', { name: /Use the groups of agent:research-bot/ }).click();
    await sim.getByRole('table', { name: 'Visible tools' }).getByRole('cell', { name: 'core__knowledge-query' }).waitFor();
    expect(await page.getByText('No policy tests yet.').count()).toBe(1);
    await sim.getByRole('button', { name: 'Save as test' }).click();
    const chooser = sim.getByRole('form', { name: 'New test from the simulator' });
    // Nothing ticked, nothing to save.
    expect(await chooser.getByRole('button', { name: 'Save test' }).isDisabled()).toBe(true);
    await chooser
      .getByRole('group', { name: /Must stay visible/ })
      .getByRole('checkbox', { name: 'core__knowledge-query' })
      .check();
    await chooser
      .getByRole('group', { name: /Must stay hidden/ })
      .getByRole('checkbox', { name: /core__reset-workflow/ })
      .check();
    await c.shot(page, 'save-as-test');
    await chooser.getByRole('button', { name: 'Save test' }).click();
    await sim.getByText(/Saved as test “agent:research-bot in /).waitFor();
    await testStatus().getByText('1 of 1 pass on the draft').waitFor();
    const saved = (await c.api('GET', '/v1/tenants/acme-research/tests')).json.tests;
    expect(saved).toHaveLength(1);
    // Exactly what was ticked; a hidden tool is held hidden for any reason unless asked otherwise.
    expect(saved[0].expect).toEqual({ visible: ['core__knowledge-query'], hidden: { 'core__reset-workflow': 'any' } });
    expect(saved[0].request).toMatchObject({ subject: 'agent:research-bot', groups: expect.arrayContaining(['knowledge']) });
  });

  it('shows the tests failing live while an edit hides a tested tool', async () => {
    await page.getByRole('button', { name: 'Remove allow pattern for researcher core__knowledge-query' }).click();
    await testStatus().getByText('0 of 1 pass with your unsaved edits').waitFor();
    const failures = page.getByRole('list', { name: 'Failing tests' }).first();
    expect(await failures.innerText()).toMatch(
      /\/tests\/0\/expect\/visible\/\d+ expected core__knowledge-query visible, saw core__knowledge-query hidden \(not_allowed\)/,
    );
    await c.shot(page, 'policy-tests-live');
    await page.getByLabel('Reason for this change').fill('researchers lose the knowledge query');
    await page.getByRole('button', { name: 'Save draft', exact: true }).click();
    await testStatus().getByText('0 of 1 pass on the draft').waitFor();
  });

  it('shows the failures before the publish button and refuses the publish', async () => {
    await go('/tenants/acme-research/publish');
    const form = page.getByRole('form', { name: 'Publish' });
    const card = page.getByRole('region', { name: 'Publish the draft' });
    await card.getByRole('status', { name: 'Policy test status' }).getByText('1 failing').waitFor();
    // The failures come before the button.
    const failuresBox = await card.getByRole('list', { name: 'Failing tests' }).boundingBox();
    const buttonBox = await form.getByRole('button', { name: 'Publish', exact: true }).boundingBox();
    expect(failuresBox!.y).toBeLessThan(buttonBox!.y);
    await form.getByLabel('Reason for publishing (required)').fill('narrow the researcher');
    await form.getByRole('button', { name: 'Publish', exact: true }).click();
    const alert = card.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/Policy tests fail[\s\S]*\/tests\/0\/expect\/visible\/\d+/);
    // The refusal points at the checkbox, not at an API field.
    expect(await alert.innerText()).not.toMatch(/"force"/);
    await alert.getByRole('button', { name: '“Publish even if policy tests fail”' }).click();
    await expect(form.getByRole('checkbox', { name: /Publish even if policy tests fail/ }).evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await c.shot(page, 'publish-tests-failed');
    expect((await c.api('GET', '/v1/tenants/acme-research/bundles')).json.items).toHaveLength(1);
  });

  it('edits a test on the Tests tab with its outcome live, then the publish goes through', async () => {
    await go('/tenants/acme-research/tests');
    const table = page.getByRole('table', { name: 'Policy tests' });
    await table.getByRole('cell', { name: 'fail', exact: true }).waitFor();
    await table.getByRole('button', { name: /^Edit agent:research-bot/ }).click();
    const editor = page.getByRole('form', { name: 'Test editor' });
    await editor.getByRole('status', { name: 'This test on the draft' }).getByText('fail').waitFor();
    await editor
      .getByLabel('Expect', { exact: true })
      .fill(JSON.stringify({ hidden: { 'core__knowledge-query': 'not_allowed' }, visible: ['core__text-completion'] }, null, 2));
    await editor.getByRole('status', { name: 'This test on the draft' }).getByText('pass').waitFor();
    await c.shot(page, 'policy-tests');
    await editor.getByRole('button', { name: 'Save test' }).click();
    await table.getByRole('cell', { name: 'pass', exact: true }).waitFor();
    expect((await c.api('GET', '/v1/tenants/acme-research/tests')).json.tests[0].expect).toEqual({
      hidden: { 'core__knowledge-query': 'not_allowed' },
      visible: ['core__text-completion'],
    });

    await go('/tenants/acme-research/publish');
    const form = page.getByRole('form', { name: 'Publish' });
    await page.getByRole('region', { name: 'Publish the draft' }).getByText('1 of 1 pass on the draft').waitFor();
    await form.getByLabel('Reason for publishing (required)').fill('narrow the researcher, tests updated');
    await form.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByText('Published version 2.').waitFor();
  });

  it("adds a test by hand, refuses a bad one with the server's pointer, and deletes", async () => {
    await go('/tenants/acme-research/tests');
    await page.getByRole('button', { name: 'Add test' }).click();
    const editor = page.getByRole('form', { name: 'Test editor' });
    await editor.getByLabel('Test name').fill('analysis bot needs approval');
    await editor.getByLabel('Request', { exact: true }).fill('{ "subject": "agent:analysis-bot", "groups": ["write"], "state": "analysis" }');
    await editor.getByLabel('Expect', { exact: true }).fill('{ "decisions": { "core__graph-updat": "require_approval" } }');
    await editor.getByRole('button', { name: 'Save test' }).click();
    const errors = editor.getByRole('list', { name: 'Expect errors' });
    await errors.waitFor();
    expect(await errors.innerText()).toContain('unknown tool "core__graph-updat"');
    await editor.getByLabel('Expect', { exact: true }).fill('{ "decisions": { "core__graph-update": "require_approval" } }');
    await editor.getByRole('status', { name: 'This test on the draft' }).getByText('pass').waitFor();
    await editor.getByRole('button', { name: 'Save test' }).click();
    const table = page.getByRole('table', { name: 'Policy tests' });
    await table.getByRole('cell', { name: 'analysis bot needs approval', exact: true }).waitFor();

    page.once('dialog', (d) => void d.accept());
    await table.getByRole('button', { name: 'Delete analysis bot needs approval' }).click();
    await page.getByText('deleted test analysis bot needs approval').waitFor();
    expect((await c.api('GET', '/v1/tenants/acme-research/tests')).json.tests.map((t: { name: string }) => t.name)).not.toContain(
      'analysis bot needs approval',
    );
  });
});
