// The admin's daily workflows, each walked end to end in a real browser against a real server:
// approval that finishes the job, the overview, a rollback that sticks, the simulator's reasons,
// answers where the person looks, a large inventory, trustworthy forms and a phone-sized window.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { StateFileServer, crashingServer } from '../fixtures/mcp/servers.ts';
import { startConsole, type Console } from './harness.ts';

let c: Console;
let page: Page;
const fixtures: StateFileServer[] = [];

beforeAll(async () => {
  c = await startConsole();
  ({ page } = await c.newSession());
  await c.login(page);
});

afterAll(async () => {
  fixtures.forEach((f) => f.dispose());
  await c?.close();
});

const go = async (p: Page, path: string) => {
  await p.goto(`${c.url}/#${path}`);
};
const focusedText = (p: Page) => p.evaluate(() => `${document.activeElement?.tagName ?? ''}:${document.activeElement?.textContent ?? ''}`);

/** Replaces a tenant's draft policy through the API (setup the test is not about). */
async function editPolicy(tenant: string, edit: (policy: any) => void) {
  const current = (await c.api('GET', `/v1/tenants/${tenant}/policy`)).json;
  const { version, tenant: _t, updatedAt: _u, createdAt: _c, ...body } = current;
  edit(body);
  const res = await c.api('PUT', `/v1/tenants/${tenant}/policy`, body, { 'if-match': `"${version}"` });
  if (res.status !== 200) throw new Error(`policy edit failed: ${res.text}`);
}

describe('approving imported tools', () => {
  it('approves one tool through a short form and says which roles now see it and why others do not', async () => {
    await editPolicy('acme-research', (p) => p.roles.researcher.allow.push('mcp__lexicon__*'));
    const fixture = new StateFileServer({
      tools: [
        {
          name: 'define',
          description: 'Define a word.',
          inputSchema: { type: 'object', properties: { word: { type: 'string' } } },
          annotations: { readOnlyHint: true },
        },
        { name: 'synonyms', description: 'Synonyms of a word.', inputSchema: { type: 'object', properties: { word: { type: 'string' } } } },
        { name: 'antonyms', description: 'Antonyms of a word.', inputSchema: { type: 'object', properties: { word: { type: 'string' } } } },
      ],
    });
    fixtures.push(fixture);
    const transport = fixture.transport() as { command: string; args: string[] };
    expect((await c.api('POST', '/v1/mcp-servers', { id: 'lexicon', label: 'Lexicon', transport })).status).toBe(201);
    expect((await c.api('POST', '/v1/mcp-servers/lexicon/sync')).status).toBe(200);

    await go(page, '/mcp');
    const review = page.getByRole('region', { name: 'Review mcp__lexicon__define' });
    await review.getByRole('button', { name: 'Approve…' }).click();
    const form = review.getByRole('form', { name: 'Approve mcp__lexicon__define' });
    // The admin decides the effect; the server's own hint is shown, not taken.
    const effect = await form.getByRole('group', { name: 'Effect (you decide)' }).innerText();
    expect(effect).toContain("The server's own claims are not trusted.");
    expect(effect).toContain('readOnlyHint: true');
    expect(effect).toContain('Recorded on import: external_side_effect');
    expect(await form.getByRole('radio', { checked: true }).count()).toBe(0);
    expect(await form.getByRole('button', { name: 'Approve', exact: true }).isDisabled()).toBe(true);
    await form.getByRole('radio', { name: /read only/ }).check();
    await form.getByLabel('Output fields kept (redaction allowlist)').fill('definition, examples[]');
    await form.getByRole('checkbox', { name: 'knowledge', exact: true }).check();
    await form.getByLabel('Reason for approving (required)').fill('Read-only dictionary lookups');
    await form.getByRole('button', { name: 'Approve', exact: true }).click();
    const outcome = page.getByRole('status', { name: 'Approval result' });
    await outcome.getByText(/now visible to roles researcher \(acme-research, allow\)/).waitFor();
    const text = await outcome.innerText();
    expect(text).toContain('Still hidden from role analyst (acme-research) because: No allow pattern of role analyst matches it.');
    expect(text).toMatch(/Still hidden from role coder \(globex-eng\) because: Belongs to default, knowledge, which the request does not ask for/);
    expect(await outcome.getByRole('link', { name: 'Edit role analyst' }).getAttribute('href')).toBe('#/tenants/acme-research');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Approval result');
    const tool = (await c.api('GET', '/v1/tools/mcp__lexicon__define')).json;
    expect(tool).toMatchObject({ status: 'active', effect: 'read_only', redaction: { allow: ['definition', 'examples[]'] }, groups: ['default', 'knowledge'] });
    await c.shot(page, 'mcp-approval', [page.getByTestId('transport')]);
  });

  it('approves several tools at once with the same answers', async () => {
    await go(page, '/mcp');
    await page.getByRole('checkbox', { name: 'Select mcp__lexicon__synonyms for bulk approval' }).check();
    await page.getByRole('checkbox', { name: 'Select mcp__lexicon__antonyms for bulk approval' }).check();
    const bar = page.getByRole('group', { name: 'Bulk approval' });
    await bar.getByText('2 selected').waitFor();
    await bar.getByRole('button', { name: 'Approve selected…' }).click();
    const form = page.getByRole('form', { name: 'Approve 2 tools' });
    await form.getByRole('radio', { name: /read only/ }).check();
    await form.getByLabel('Output fields kept (redaction allowlist)').fill('words[]');
    await form.getByRole('checkbox', { name: 'knowledge', exact: true }).check();
    await form.getByLabel('Reason for approving (required)').fill('Same review for both');
    await form.getByRole('button', { name: 'Approve 2 tools' }).click();
    const outcome = page.getByRole('status', { name: 'Approval result' });
    await outcome.getByText('Approved 2 tools.').waitFor();
    await outcome.getByText(/mcp__lexicon__antonyms: now visible to roles researcher/).waitFor();
    await outcome.getByText(/mcp__lexicon__synonyms: now visible to roles researcher/).waitFor();
    await page.getByText('No quarantined tool awaits review.').waitFor();
    for (const id of ['mcp__lexicon__synonyms', 'mcp__lexicon__antonyms']) {
      expect((await c.api('GET', `/v1/tools/${id}`)).json).toMatchObject({ status: 'active', redaction: { allow: ['words[]'] } });
    }
    const audit = (await c.api('GET', '/v1/audit?action=approve&entityId=mcp__lexicon__antonyms')).json.items;
    expect(audit[0].reason).toBe('Same review for both');
  });
});

describe('the home page and the tenants overview', () => {
  it('lands on what needs attention after sign-in, each item linked to its fix', async () => {
    const runtime = (await c.api('POST', '/v1/tokens', { label: 'overview runtime', role: 'runtime', tenants: ['globex-eng'] })).json.token as string;
    expect((await c.api('POST', '/v1/tenants/globex-eng/bundles', { reason: 'first' })).status).toBe(201);
    await editPolicy('globex-eng', (p) => (p.bundleTtlSeconds = 7200));
    expect((await c.api('POST', '/v1/tenants/globex-eng/bundles', { reason: 'second' })).status).toBe(201);
    const report = (body: unknown) =>
      fetch(`${c.url}/v1/tenants/globex-eng/runtimes/status`, {
        method: 'POST',
        headers: { authorization: `Bearer ${runtime}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await report({ runtimeId: 'old-host', version: 1, health: 'stale', lastError: 'unreachable' })).status).toBe(204);
    expect((await report({ runtimeId: 'new-host', version: 2, health: 'fresh' })).status).toBe(204);
    expect((await c.api('POST', '/v1/mcp-servers', { id: 'broken', label: 'Broken server', transport: crashingServer() })).status).toBe(201);
    await c.api('POST', '/v1/mcp-servers/broken/sync');
    await editPolicy('globex-eng', (p) => p.roles.coder.deny.push('core__host_exec'));

    const s = await c.newSession();
    try {
      await c.login(s.page);
      const home = s.page.getByRole('main');
      await s.page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
      const drafts = home.getByRole('region', { name: /Unpublished drafts/ });
      await drafts.getByText('differs from v2 in policy').waitFor();
      expect(await drafts.getByRole('link', { name: 'Globex Engineering' }).getAttribute('href')).toBe('#/tenants/globex-eng/publish');
      await home
        .getByRole('region', { name: /Failed MCP syncs \(1\)/ })
        .getByText('Broken server')
        .waitFor();
      const runtimes = home.getByRole('region', { name: /Runtimes on old versions or unhealthy \(1\)/ });
      await runtimes.getByText(/old-host in Globex Engineering: v1, 1 behind stale/).waitFor();
      await c.shot(s.page, 'home');

      await s.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tenants' }).click();
      const table = s.page.getByRole('table', { name: 'Tenants' });
      const globex = table.getByRole('row', { name: /Globex Engineering/ });
      await globex.waitFor();
      const row = await globex.innerText();
      expect(row).toContain('coder, reviewer');
      expect(row).toContain('2: agent:coding-bot, agent:review-bot');
      expect(row).toContain('v2');
      expect(row).toMatch(/unpublished\s+policy/);
      expect(row).toMatch(/1 of 2 on latest\s*1 behind\s*1 unhealthy/);
      expect(await table.getByRole('row', { name: /Acme Research/ }).innerText()).toMatch(/never[\s\S]*unpublished\s+first publish/);
      await c.shot(s.page, 'tenants');
    } finally {
      await s.context.close();
    }
  });
});

describe('rolling back', () => {
  it('keeps publish and rollback reasons apart and resets the draft so the rollback sticks', async () => {
    await go(page, '/tenants/globex-eng/publish');
    await page.getByLabel('Latest version').getByText('v2').waitFor();
    await page.getByRole('button', { name: 'Roll back to v1' }).click();
    const form = page.getByRole('form', { name: 'Roll back to version 1' });
    await form.getByLabel('Reason for rolling back (required)').fill('Back to the one-hour TTL');
    // Typing the rollback reason neither fills in nor enables Publish.
    expect(await page.getByLabel('Reason for publishing (required)').inputValue()).toBe('');
    expect(await page.getByRole('button', { name: 'Publish', exact: true }).isDisabled()).toBe(true);
    expect(await form.getByRole('checkbox', { name: /Also reset the draft to v1's policy and grants/ }).isChecked()).toBe(true);
    // Nor does forcing the rollback force the next publish.
    const forceRollback = form.getByRole('checkbox', { name: /Roll back even if policy tests fail/ });
    await forceRollback.check();
    expect(await page.getByRole('checkbox', { name: /Publish even if policy tests fail/ }).isChecked()).toBe(false);
    await forceRollback.uncheck();
    await form.getByRole('button', { name: 'Roll back to v1' }).click();
    await page.getByText("Rolled back: version 3 now carries the content of v1. The draft was reset to v1's policy and grants").waitFor();
    // Nothing is offered for re-publishing: the draft is what is live.
    await page.getByText('The draft has the same content as v3: publishing it would not create a new version.').waitFor();
    const policy = (await c.api('GET', '/v1/tenants/globex-eng/policy')).json;
    expect(policy.bundleTtlSeconds).toBe(3600);
    expect(policy.roles.coder.deny).not.toContain('core__host_exec');
  });
});

describe('the simulator explains', () => {
  it('opens a new tenant on what its subject sees, and says why each tool is filtered with a link to the fix', async () => {
    await go(page, '/tenants');
    const form = page.getByRole('form', { name: 'New tenant' });
    await form.getByLabel('Tenant id').fill('initech');
    await form.getByLabel('Name').fill('Initech');
    await form.getByRole('button', { name: 'Create tenant' }).click();
    await page.getByRole('heading', { name: /Initech/, level: 1 }).waitFor();
    await page.getByRole('status').getByText('Created tenant Initech.').waitFor();
    expect(await focusedText(page)).toMatch(/^H1:Initech/);
    const sim = page.getByRole('region', { name: 'Simulator' });
    await sim.getByText(/No subject is bound to a role yet/).waitFor();

    await editPolicy('initech', (p) => {
      p.roles = { support: { groups: ['knowledge', 'basic'], allow: ['core__knowledge-*', 'core__text-*'], deny: ['core__graph-*'], requireApproval: [] } };
      p.bindings = { 'agent:helpdesk': ['support'] };
    });
    await page.reload();
    await sim.getByLabel('Subject').waitFor();
    expect(await sim.getByLabel('Subject').inputValue()).toBe('agent:helpdesk');
    expect(await sim.getByLabel('Requested groups').inputValue()).toBe('knowledge, basic');
    const visible = sim.getByRole('table', { name: 'Visible tools' });
    await visible.getByRole('row', { name: /core__knowledge-query\s+allow/ }).waitFor();
    expect(await sim.getByText(/Request rejected/).count()).toBe(0);
    const filtered = sim.getByRole('table', { name: 'Filtered tools' });
    const graph = filtered.getByRole('row', { name: /core__graph-update/ });
    expect(await graph.innerText()).toMatch(/state\s+Not available in state undefined \(only in .*\)\.\s+Change its states/);
    const host = filtered.getByRole('row', { name: /core__host_exec/ });
    expect(await host.innerText()).toMatch(/which the request does not ask for \(it asks for (knowledge, basic|basic, knowledge)\)/);
    expect(await host.getByRole('link', { name: 'Change its groups' }).getAttribute('href')).toBe('#/tools/core__host_exec');

    // Asking for a group the roles do not permit says so in words, and offers the way back.
    await sim.getByLabel('Requested groups').fill('admin');
    await sim
      .getByRole('alert')
      .getByText(/no role of agent:helpdesk permits the group\(s\) admin\. Its roles permit knowledge, basic\./)
      .waitFor();
    await sim.getByRole('button', { name: 'Ask for those instead' }).click();
    await visible.getByRole('row', { name: /core__knowledge-query\s+allow/ }).waitFor();
    await c.shot(page, 'simulator-reasons');
  });
});

describe('answers where the person looks', () => {
  it('shows "Draft saved" beside the save button and the created tool on its own page with focus on its heading', async () => {
    // Both demo tenants open their simulator on what their first subject sees, not on a rejection.
    for (const [tenant, subject] of [
      ['globex-eng', 'agent:coding-bot'],
      ['acme-research', 'agent:research-bot'],
    ]) {
      await go(page, `/tenants/${tenant}`);
      const sim = page.getByRole('region', { name: 'Simulator' });
      await sim.getByRole('table', { name: 'Visible tools' }).getByRole('row').nth(1).waitFor();
      expect(await sim.getByLabel('Subject').inputValue()).toBe(subject);
      expect(await sim.getByText(/Request rejected/).count()).toBe(0);
    }
    await page.getByLabel('Bundle TTL (seconds)').fill('5400');
    await page.getByRole('button', { name: 'Save draft', exact: true }).click();
    const saved = page.getByRole('status').filter({ hasText: 'Draft saved' });
    await saved.waitFor();
    const [box, button] = await Promise.all([saved.boundingBox(), page.getByRole('button', { name: 'Save draft', exact: true }).boundingBox()]);
    const viewport = page.viewportSize()!;
    expect(box!.y).toBeGreaterThanOrEqual(0);
    expect(box!.y + box!.height).toBeLessThanOrEqual(viewport.height);
    expect(Math.abs(box!.y - button!.y)).toBeLessThan(150);

    await go(page, '/tools/new');
    await page.getByLabel('Tool id').fill('core__e2e-created');
    await page.getByLabel('Description').fill('Made by the workflow test');
    await page.getByRole('button', { name: 'Create tool' }).click();
    await page.getByRole('heading', { name: 'core__e2e-created', level: 1 }).waitFor();
    await page.getByRole('status').getByText('Created core__e2e-created.').waitFor();
    await page.waitForFunction(() => document.activeElement?.tagName === 'H1');
    expect(await focusedText(page)).toBe('H1:core__e2e-created');
  });
});

describe('a large inventory', () => {
  it('pages, searches, filters on missing redaction and keeps the bulk bar in view with one reason', async () => {
    const ids = Array.from({ length: 130 }, (_, i) => `core__bulk-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < ids.length; i += 10) {
      await Promise.all(
        ids.slice(i, i + 10).map((id, j) =>
          c.api('POST', '/v1/tools', {
            id,
            description: `Bulk tool ${id}`,
            inputSchema: { type: 'object' },
            effect: 'read_only',
            ...((i + j) % 2 ? { redaction: { allow: [] } } : {}),
          }),
        ),
      );
    }
    await go(page, '/tools');
    const table = page.getByRole('table', { name: 'Tools' });
    await page.getByLabel('Search').fill('bulk-');
    await page
      .getByRole('status')
      .getByText(/^1–50 of 130 tool\(s\) · 65 without redaction/)
      .waitFor();
    expect(await table.getByRole('row').count()).toBe(51);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page
      .getByRole('status')
      .getByText(/^51–100 of 130 tool\(s\)/)
      .waitFor();
    await table.getByRole('link', { name: 'core__bulk-050' }).waitFor();
    await page.getByLabel('Redaction').selectOption('none');
    await page
      .getByRole('status')
      .getByText(/^1–50 of 65 tool\(s\) · 65 without redaction/)
      .waitFor();
    expect(await table.getByText('no redaction').count()).toBe(50);

    await table.getByRole('checkbox', { name: 'Select all tools on this page' }).check();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page
      .getByRole('status')
      .getByText(/^51–65 of 65/)
      .waitFor();
    await table.getByRole('checkbox', { name: 'Select core__bulk-128' }).check();
    const bulk = page.getByRole('group', { name: 'Bulk actions' });
    await bulk.getByText('51 selected').waitFor();
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    const bar = await bulk.boundingBox();
    expect(bar!.y).toBeGreaterThanOrEqual(0);
    expect(bar!.y).toBeLessThan(page.viewportSize()!.height);
    await bulk.getByLabel('Group').selectOption('knowledge');
    await bulk.getByLabel('Reason').fill('Bulk tools answer knowledge questions');
    await bulk.getByRole('button', { name: 'Add to group' }).click();
    await bulk.getByRole('status').getByText('Added 51 tool(s) to knowledge.').waitFor();
    const events = (await c.api('GET', '/v1/audit?entityId=core__bulk-128&action=update')).json.items;
    expect(events.at(-1).reason).toBe('Bulk tools answer knowledge questions');
    await c.shot(page, 'tools-paged');
  });
});

describe('forms people can trust', () => {
  it('re-checks the input schema as you type with the server rules and moves the error with its line', async () => {
    await go(page, '/tools/new');
    const editor = page.getByLabel('Input schema', { exact: true });
    await editor.fill(['{', '  "type": "object",', '  "properties": {', '    "v": { "$dynamicRef": "#x" }', '  }', '}'].join('\n'));
    const errors = page.getByRole('list', { name: 'Input schema errors' });
    await errors.getByText('`$dynamicRef` is not allowed in schemas: only `$ref` to a JSON pointer in the same schema').waitFor();
    expect(await errors.innerText()).toContain('Line 4');
    await editor.fill(
      ['{', '  "type": "object",', '  "description": "moved down",', '  "properties": {', '    "v": { "$dynamicRef": "#x" }', '  }', '}'].join('\n'),
    );
    await errors.getByText('Line 5').waitFor();
    await editor.fill('{\n  "type": "object"\n}');
    await errors.waitFor({ state: 'detached' });
    await c.shot(page, 'schema-live-error');
    page.once('dialog', (d) => void d.accept());
    await go(page, '/tokens');
    await page.getByRole('heading', { name: 'Tokens', level: 1 }).waitFor();
  });

  it('gives tokens an expiry, hides the token form from a viewer who types its address, and filters the audit by name', async () => {
    await go(page, '/tokens');
    const form = page.getByRole('form', { name: 'New token' });
    await form.getByLabel('Label').fill('Short-lived viewer');
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByRole('checkbox', { name: 'acme-research' }).check();
    await form.getByLabel('Expires (optional)').fill('2099-01-31T12:00');
    await form.getByRole('button', { name: 'Create token' }).click();
    const secret = form.getByLabel('New token secret');
    await secret.waitFor();
    expect(
      await page.evaluate(
        () => document.activeElement?.getAttribute('aria-label') ?? (document.activeElement as HTMLInputElement | null)?.labels?.[0]?.textContent,
      ),
    ).toBe('New token secret');
    const token = await secret.inputValue();
    const row = page.getByRole('table', { name: 'Tokens' }).getByRole('row', { name: /Short-lived viewer/ });
    expect(await row.innerText()).toContain(new Date('2099-01-31T12:00').toLocaleString('en-US'));

    const v = await c.newSession();
    try {
      await c.login(v.page, token);
      await go(v.page, '/tokens');
      await v.page.getByText('Only admins create, list and revoke tokens.').waitFor();
      expect(await v.page.getByRole('form', { name: 'New token' }).count()).toBe(0);
    } finally {
      await v.context.close();
    }

    await go(page, '/audit');
    const actor = page.getByLabel('Actor');
    expect(await page.locator(`datalist option[value="Short-lived viewer (viewer)"]`).count()).toBe(1);
    expect(await page.locator(`datalist option[value="bootstrap admin (admin)"]`).count()).toBe(1);
    await actor.fill('bootstrap admin (admin)');
    const timeline = page.getByRole('list', { name: 'Audit timeline' });
    await timeline.getByRole('listitem').first().waitFor();
    expect(await timeline.getByRole('listitem').filter({ hasNotText: 'by bootstrap admin (admin)' }).count()).toBe(0);
    await actor.fill('');
    const first = timeline.getByRole('listitem').filter({ hasText: 'core__e2e-created' }).first();
    // Opening the event offers its filters; the row itself filters nothing.
    await first.locator('summary').click();
    await first.getByRole('button', { name: 'Show only events on tool core__e2e-created' }).click();
    await page.waitForFunction(() => window.location.hash.includes('entityId=core__e2e-created'));
    expect(await timeline.getByRole('listitem').filter({ hasNotText: 'core__e2e-created' }).count()).toBe(0);
  });
});

describe('a phone-sized window', () => {
  it('collapses the navigation into a menu, switches between policy and simulator, and keeps tool id and status in view', async () => {
    const n = await c.newSession({ width: 390, height: 844 });
    try {
      await c.login(n.page);
      const nav = n.page.getByRole('navigation', { name: 'Main' });
      expect(await nav.isVisible()).toBe(false);
      await n.page.getByRole('button', { name: 'Menu' }).click();
      await nav.getByRole('link', { name: 'Tenants' }).click();
      await n.page.getByRole('heading', { name: 'Tenants', level: 1 }).waitFor();
      expect(await nav.isVisible()).toBe(false);

      await go(n.page, '/tenants/acme-research');
      await n.page.getByRole('tab', { name: 'Simulator' }).click();
      const sim = n.page.getByRole('region', { name: 'Simulator' });
      await sim.getByRole('table', { name: 'Visible tools' }).waitFor();
      const top = (await sim.boundingBox())!.y;
      expect(top).toBeLessThan(844);
      await c.shot(n.page, 'narrow-simulator');

      await go(n.page, '/tools?q=knowledge-query');
      const table = n.page.getByRole('table', { name: 'Tools' });
      await table.getByRole('link', { name: 'core__knowledge-query' }).waitFor();
      expect(await table.getByRole('columnheader', { name: 'Status' }).isVisible()).toBe(true);
      expect(await table.getByRole('columnheader', { name: 'Effect' }).isVisible()).toBe(false);
      const status = await table
        .getByRole('row', { name: /core__knowledge-query/ })
        .getByText('active')
        .boundingBox();
      expect(status!.x + status!.width).toBeLessThanOrEqual(390);
      expect(await n.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    } finally {
      await n.context.close();
    }
  });
});
