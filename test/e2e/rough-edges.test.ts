import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { StateFileServer } from '../fixtures/mcp/servers.ts';
import { startConsole, type Console } from './harness.ts';

// The rough edges a new admin met in the console, each as that admin would meet it.
let c: Console;
let page: Page;
const consoleWarnings: string[] = [];

beforeAll(async () => {
  c = await startConsole();
  ({ page } = await c.newSession({ width: 1920, height: 1080 }));
  page.on('console', (m) => consoleWarnings.push(m.text()));
  // The unsaved-changes prompt may still be open when the browser closes.
  page.on('dialog', (d) => void d.accept().catch(() => undefined));
  await c.login(page);
});

afterAll(async () => {
  await c?.close();
});

const go = async (path: string) => {
  await page.goto(`${c.url}/#${path}`);
  await page.reload();
};

describe('forms say what a name may hold, at the field', () => {
  it('shows a tenant id format error in words next to the field and does not submit it', async () => {
    await go('/tenants');
    const form = page.getByRole('form', { name: 'New tenant' });
    const id = form.getByLabel('Tenant id');
    await id.fill('Acme Prod');
    await form.getByText('Not allowed here: use lowercase letters, digits and - only (e.g. acme-prod).').waitFor();
    expect(await id.getAttribute('aria-invalid')).toBe('true');
    await form.getByLabel('Name').fill('Acme production');
    await form.getByRole('button', { name: 'Create tenant' }).click();
    expect((await c.api('GET', '/v1/tenants')).json.items.map((t: { id: string }) => t.id)).not.toContain('Acme Prod');
    await id.fill('acme-prod');
    expect(await form.getByText(/Not allowed here/).count()).toBe(0);
    // Chromium compiles pattern attributes with the v flag; none is left for it to refuse.
    expect(consoleWarnings.filter((w) => /Pattern attribute value/.test(w))).toEqual([]);
  });

  it('names the mistyped type of an input schema and the type meant', async () => {
    await go('/tools/new');
    const editor = page.getByLabel('Input schema', { exact: true });
    await editor.fill(JSON.stringify({ type: 'object', properties: { name: { type: 'strng' } } }, null, 2));
    const errors = page.getByRole('list', { name: 'Input schema errors' });
    await errors.getByText(/"strng" is not a JSON Schema type: .*\(did you mean "string"\?\)/).waitFor();
    expect(await errors.getByRole('listitem').count()).toBe(1);
  });

  it('asks for an absolute command when registering an MCP server, and the refusal names the commands allowed', async () => {
    await go('/mcp');
    const form = page.getByRole('form', { name: 'Add MCP server' });
    const command = form.getByLabel('Command (absolute path)');
    expect(await command.getAttribute('placeholder')).not.toBe('npx');
    await form.getByLabel('Server id').fill('memory');
    await form.getByLabel('Label').fill('Memory');
    await command.fill('npx');
    await form.getByRole('button', { name: 'Add server' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain(`it is not one of those listed: ${process.execPath}`);
  });
});

describe('reviewing imported tools', () => {
  it('reads a new tool as description and parameters, and a bulk approval says which tool claimed what', async () => {
    const fixture = new StateFileServer({
      tools: [
        {
          name: 'search',
          description: 'Search the notes.',
          inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'words to find' } }, required: ['query'] },
          annotations: { readOnlyHint: true },
        },
        {
          name: 'purge',
          description: 'Delete every note.',
          inputSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
          annotations: { readOnlyHint: false, destructiveHint: true },
        },
      ],
    });
    try {
      expect((await c.api('POST', '/v1/mcp-servers', { id: 'notes', label: 'Notes', transport: fixture.transport() })).status).toBe(201);
      const synced = await c.api('POST', '/v1/mcp-servers/notes/sync', {});
      expect(synced.status, synced.text).toBe(200);
      await go('/mcp');
      const search = page.getByRole('region', { name: 'Review mcp__notes__search' });
      const params = search.getByRole('table', { name: 'Parameters of mcp__notes__search' });
      await params.getByRole('row', { name: /query\s+string\s+yes\s+words to find/ }).waitFor();
      await search.getByText('The server claims (not trusted): readOnlyHint true.').waitFor();
      // The raw definition waits behind a disclosure.
      expect(await search.getByText('"inputSchema"').isVisible()).toBe(false);

      await search.getByRole('checkbox', { name: 'Select mcp__notes__search for bulk approval' }).check();
      await page
        .getByRole('region', { name: 'Review mcp__notes__purge' })
        .getByRole('checkbox', { name: /Select mcp__notes__purge/ })
        .check();
      await page.getByRole('group', { name: 'Bulk approval' }).getByRole('button', { name: 'Approve selected…' }).click();
      const form = page.getByRole('form', { name: 'Approve 2 tools' });
      const said = form.getByRole('table', { name: 'What each server says' });
      await said.getByRole('row', { name: /mcp__notes__purge\s+readOnlyHint: false, destructiveHint: true/ }).waitFor();
      await said.getByRole('row', { name: /mcp__notes__search\s+readOnlyHint: true/ }).waitFor();
    } finally {
      fixture.dispose();
    }
  });
});

describe('a long review queue', () => {
  it('lists 13 more imported tools a line each, opening a definition on request', async () => {
    const fixture = new StateFileServer({
      tools: Array.from({ length: 13 }, (_, i) => ({
        name: `op_${i}`,
        description: `Operation ${i} on the ledger.`,
        inputSchema: { type: 'object', properties: { account: { type: 'string' }, amount: { type: 'number' } }, required: ['account'] },
      })),
    });
    try {
      expect((await c.api('POST', '/v1/mcp-servers', { id: 'ledger', label: 'Ledger', transport: fixture.transport() })).status).toBe(201);
      expect((await c.api('POST', '/v1/mcp-servers/ledger/sync', {})).status).toBe(200);
      await go('/mcp');
      const queue = page.getByRole('region', { name: 'Review queue' });
      const op7 = queue.getByRole('region', { name: 'Review mcp__ledger__op_7' });
      await op7.getByText(/Operation 7 on the ledger\.\s+· parameters account, amount/).waitFor();
      // 15 tools wait; the queue stays a page or two, not a wall of JSON.
      expect((await queue.boundingBox())!.height).toBeLessThan(3000);
      expect(await queue.getByRole('table').count()).toBe(0);
      await op7.getByRole('button', { name: 'Show the definition of mcp__ledger__op_7' }).click();
      await op7
        .getByRole('table', { name: 'Parameters of mcp__ledger__op_7' })
        .getByRole('row', { name: /account\s+string\s+yes/ })
        .waitFor();
    } finally {
      fixture.dispose();
    }
  });
});

describe('publishing and the fleet', () => {
  it('refuses to read "latest" in green while a runtime on the latest version is stale with an expired bundle', async () => {
    expect((await c.api('POST', '/v1/tenants/globex-eng/bundles', { reason: 'v1' })).status).toBe(201);
    const runtime = (await c.api('POST', '/v1/tokens', { label: 'fleet runtime', role: 'runtime', tenants: ['globex-eng'] })).json as { token: string };
    const report = (body: unknown) =>
      fetch(`${c.url}/v1/tenants/globex-eng/runtimes/status`, {
        method: 'POST',
        headers: { authorization: `Bearer ${runtime.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await report({ runtimeId: 'host-1', version: 1, health: 'fresh' })).status).toBe(204);
    expect((await report({ runtimeId: 'host-2', version: 1, health: 'fresh' })).status).toBe(204);
    expect((await report({ runtimeId: 'host-3', version: 1, health: 'stale', lastError: 'expired' })).status).toBe(204);
    await go('/tenants/globex-eng/publish');
    const fleet = page.getByRole('status', { name: 'Fleet' });
    await fleet.getByText(/2 of 3 runtime\(s\) run the latest version \(v1\) and are fresh/).waitFor();
    expect(await fleet.innerText()).toMatch(/1 stale.*serving their last good bundle, 1 of them refusing an expired bundle/s);
  });

  it('shows the diff and the impact before a rollback, as before a publish', async () => {
    const pol = await c.api('GET', '/v1/tenants/globex-eng/policy');
    const policy = pol.json;
    policy.roles.coder.deny = [...(policy.roles.coder.deny ?? []), 'core__text-completion'];
    const put = await c.api('PUT', '/v1/tenants/globex-eng/policy', policy, { 'if-match': pol.headers.get('etag')! });
    expect(put.status, put.text).toBe(200);
    expect((await c.api('POST', '/v1/tenants/globex-eng/bundles', { reason: 'v2' })).status).toBe(201);
    await go('/tenants/globex-eng/publish');
    await page.getByRole('button', { name: 'Roll back to v1' }).click();
    const form = page.getByRole('form', { name: 'Roll back to version 1' });
    await form.getByRole('heading', { name: 'Changes from v2 back to v1' }).waitFor();
    await form
      .getByRole('table', { name: 'v2 back to v1: summary by role' })
      .getByRole('row', { name: /coder\s+1 tool\(s\)\s+0 tool\(s\)/ })
      .waitFor();
    await form.getByRole('heading', { name: 'Impact on logged traffic' }).waitFor();
    await form.getByText(/No decision was logged/).waitFor();
    await form.getByRole('button', { name: 'Cancel' }).click();
  });
});

describe('tools in bulk', () => {
  it('selects every matching tool beyond the page and sets their redaction in one go', async () => {
    // 60 tools without redaction: more than one page of 50.
    for (let i = 0; i < 60; i++) {
      const r = await c.api('POST', '/v1/tools', {
        id: `bulk__tool-${String(i).padStart(2, '0')}`,
        description: 'bulk test tool',
        effect: 'read_only',
        inputSchema: { type: 'object' },
      });
      if (r.status !== 201) throw new Error(r.text);
    }
    await go('/tools?redaction=none&q=bulk__');
    const table = page.getByRole('table', { name: 'Tools' });
    await table.getByRole('checkbox', { name: 'Select all tools on this page' }).check();
    await page.getByRole('button', { name: /Select all \d+ tools that match these filters/ }).click();
    const bulk = page.getByRole('group', { name: 'Bulk actions' });
    await bulk.getByText(/^60 selected$/).waitFor();
    await bulk.getByLabel('Output fields kept').fill('title, items[].id');
    await bulk.getByLabel('Reason').fill('keep only titles and ids');
    await bulk.getByRole('button', { name: 'Set redaction allowlist' }).click();
    await bulk.getByText(/Set the redaction allowlist of 60 tool\(s\)\./).waitFor();
    const left = await c.api('GET', '/v1/tools?redaction=none&q=bulk__&limit=1000');
    expect(left.json.total).toBe(0);
    const one = await c.api('GET', '/v1/tools/bulk__tool-59');
    expect(one.json.redaction).toEqual({ allow: ['title', 'items[].id'] });
    // Beyond groups and redaction: the same selection disabled in one go.
    await bulk.getByRole('button', { name: 'Disable selected' }).click();
    await bulk.getByText('Disabled 60 tool(s): they leave every bundle until enabled again.').waitFor();
    expect((await c.api('GET', '/v1/tools?status=disabled&q=bulk__&limit=1000')).json.total).toBe(60);
  });
});

describe('the simulator explains in full sentences', () => {
  it('gives the why column room at 1920 px', async () => {
    await go('/tenants/acme-research');
    const sim = page.getByRole('region', { name: 'Simulator' });
    await sim.getByRole('button', { name: /Use the groups of agent:research-bot/ }).click();
    const filtered = sim.getByRole('table', { name: 'Filtered tools' });
    const why = filtered.getByRole('row').nth(1).getByRole('cell').nth(2);
    await why.waitFor();
    const box = await why.boundingBox();
    expect(box!.width).toBeGreaterThan(220);
    // Not clipped: the cell shows all of its text.
    expect(await why.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
  });
});

describe('keys, single sign-on and the audit log', () => {
  it('says why Promote and Retire are disabled on the Keys page', async () => {
    await go('/keys');
    const reason = page.getByLabel('Reason for the change (required, audited)');
    const table = page.getByRole('table', { name: 'Signing keys' });
    // The reason comes before the buttons that need it, and they say so.
    expect((await reason.boundingBox())!.y).toBeLessThan((await table.boundingBox())!.y);
    await page.getByText('Promote, Retire and Add next key stay disabled until you write why you change the keys.').waitFor();
    await reason.fill('quarterly rotation');
    await page.getByRole('button', { name: 'Add next key' }).click();
    await page.getByText(/A next key was added/).waitFor();
    const promote = table.getByRole('button', { name: /^Promote / });
    expect(await promote.isDisabled()).toBe(true);
    expect(await promote.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby') ?? '')?.textContent)).toMatch(/stay disabled until/);
  });

  it('says on the Single sign-on page when single sign-on is off on this server', async () => {
    await go('/sso');
    await page
      .getByRole('note')
      .getByText(/Single sign-on is off on this server/)
      .waitFor();
  });

  it('puts "Load older events" after the newest-first list, and opening a row filters nothing', async () => {
    for (let i = 0; i < 60; i++) {
      const r = await c.api('POST', '/v1/groups', { name: `audit-${i}`, description: 'for the audit page', includes: [] });
      if (r.status !== 201) throw new Error(r.text);
    }
    await go('/audit');
    const timeline = page.getByRole('list', { name: 'Audit timeline' });
    const older = page.getByRole('button', { name: 'Load older events' });
    await older.waitFor();
    const last = timeline.getByRole('listitem').last();
    expect((await older.boundingBox())!.y).toBeGreaterThan((await last.boundingBox())!.y);
    // No control inside a row's summary: a click opens the event and the URL keeps no filter.
    expect(await timeline.locator('summary button, summary a').count()).toBe(0);
    const first = timeline.getByRole('listitem').first();
    await first.locator('summary').click();
    expect(page.url()).not.toMatch(/entityType=|actor=/);
    await first.getByRole('button', { name: /^Show only events on group audit-59/ }).click();
    await page.waitForFunction(() => decodeURIComponent(window.location.hash).includes('entityId=audit-59'));
  });
});
