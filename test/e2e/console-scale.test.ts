// The console with a large inventory (600 extra tools here; the console-scale benchmark times 5,000):
// the simulator summarises hidden tools by reason and renders long lists only around what is in
// view, a checkbox of the policy editor changes the answer, and the tools search narrows results.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '../../policy-schemas/types.gen.ts';
import { toolStore } from '../../server/store/inventory.ts';
import { type Console, startConsole } from './harness.ts';

const EXTRA = 600;
let c: Console;
let page: Page;

beforeAll(async () => {
  c = await startConsole();
  const now = new Date().toISOString();
  await c.deps.database.db.transaction().execute(async (tx) => {
    for (let i = 0; i < EXTRA; i++) {
      const id = `mcp__scale__tool-${String(i).padStart(3, '0')}`;
      const tool: Tool = {
        id,
        description: `Scale tool number ${i}.`,
        inputSchema: { type: 'object' },
        effect: 'read_only',
        // Half of them in a group the coder role has (basic), half in one it lacks (knowledge).
        groups: ['default', i % 2 ? 'knowledge' : 'basic'],
        status: 'active',
        redaction: { allow: ['result'] },
        source: { kind: 'mcp', server: 'scale', originalName: `tool-${String(i).padStart(3, '0')}` },
      };
      await toolStore.insert(tx, id, tool, now);
    }
  });
  ({ page } = await c.newSession());
  await c.login(page);
});

afterAll(async () => {
  await c?.close();
});

/** Data rows of a table (spacer rows of a windowed table hold no cells). */
const dataRows = (table: ReturnType<Page['getByRole']>) => table.locator('tbody tr:has(td)');

describe('the simulator with 600 extra tools', () => {
  it("summarises the hidden tools by reason and lists a reason's tools in a bounded table", async () => {
    await page.goto(`${c.url}/#/tenants/globex-eng`);
    const sim = page.getByRole('region', { name: 'Simulator' });
    await sim.getByLabel('Subject').fill('agent:coding-bot');
    const reasons = sim.getByRole('list', { name: /Hidden tools by reason/ });
    // None of the 600 is allowed to the coder (its allowlist names core tools only).
    const notAllowed = reasons.getByRole('button', { name: /^not_allowed: \d+$/ });
    await notAllowed.waitFor();
    const count = Number((await notAllowed.textContent())!.split(': ')[1]);
    expect(count).toBeGreaterThanOrEqual(EXTRA / 2);
    // A long list opens on nothing but the counts (nothing changed since the published version for them).
    expect(await sim.getByRole('table', { name: 'Filtered tools' }).count()).toBe(0);

    await notAllowed.click();
    expect(await notAllowed.getAttribute('aria-pressed')).toBe('true');
    const filtered = sim.getByRole('table', { name: 'Filtered tools' });
    await filtered.getByText(`Filtered tools: not_allowed (${count} of`).waitFor();
    const rendered = await dataRows(filtered).count();
    expect(rendered).toBeGreaterThan(0);
    expect(rendered).toBeLessThan(100);
    // Scrolled to the end, the table shows the last tools of the list (and still not all of them).
    await filtered.evaluate((t) => {
      const scroller = t.parentElement!;
      scroller.scrollTop = scroller.scrollHeight;
    });
    // (The even-numbered tools are in basic, so the last not allowed is 598.)
    await filtered.getByRole('cell', { name: 'mcp__scale__tool-598', exact: true }).waitFor();
    expect(await dataRows(filtered).count()).toBeLessThan(100);
    expect(await filtered.getByRole('cell', { name: 'mcp__scale__tool-000', exact: true }).count()).toBe(0);

    // The same button closes the list again.
    await notAllowed.click();
    await sim.getByText('Choose a reason to list its tools.').waitFor();
  });

  it('renders only the visible tools in view when hundreds are visible, and a checkbox changes the answer', async () => {
    await page.goto(`${c.url}/#/tenants/globex-eng`);
    const sim = page.getByRole('region', { name: 'Simulator' });
    await sim.getByLabel('Subject').fill('agent:coding-bot');
    const role = page.getByRole('region', { name: 'Role coder' });
    await role.getByLabel('New allow pattern for coder').fill('mcp__scale__*');
    await role.getByText(`${EXTRA} match`).waitFor();
    await role.getByRole('button', { name: 'Add allow pattern for coder' }).click();
    await sim.getByText(/You have unsaved edits/).waitFor();

    // The coder asks for basic: the 300 tools of basic are visible, in a table of bounded rows.
    const visible = sim.getByRole('table', { name: 'Visible tools' });
    await visible.getByText(/^Visible tools \(3\d\d\)$/).waitFor();
    expect(await dataRows(visible).count()).toBeLessThan(100);
    const groupHidden = sim.getByRole('list', { name: /Hidden tools by reason/ }).getByRole('button', { name: /^group: / });
    await groupHidden.waitFor();
    const before = Number((await groupHidden.textContent())!.split(': ')[1]);
    expect(before).toBeGreaterThanOrEqual(EXTRA / 2);

    // Ticking the knowledge group for the role: its 300 tools become visible, and none hides for its group.
    const knowledge = role.getByRole('group', { name: 'Groups of coder' }).getByRole('checkbox', { name: 'knowledge' });
    await knowledge.check();
    await visible.getByText(/^Visible tools \(6\d\d\)$/).waitFor();
    await sim.getByText(/Groups: [^·]*knowledge/).waitFor();
    expect(await dataRows(visible).count()).toBeLessThan(100);
    // The 300 hidden for their group (knowledge) are not any more; core tools of other groups still are.
    const groupNow = sim.getByRole('list', { name: /Hidden tools by reason/ }).getByRole('button', { name: /^group: / });
    const after = (await groupNow.count()) ? Number((await groupNow.textContent())!.split(': ')[1]) : 0;
    expect(after).toBeLessThanOrEqual(before - EXTRA / 2);

    // Unticked again: the answer is the one before.
    await knowledge.uncheck();
    await visible.getByText(/^Visible tools \(3\d\d\)$/).waitFor();
    await sim.getByRole('button', { name: `group: ${before}`, exact: true }).waitFor();
    await page.getByRole('button', { name: 'Discard edits' }).click();
  });
});

describe('the tools page search with 600 extra tools', () => {
  it('narrows the table as the text is typed, and says when nothing matches', async () => {
    await page.goto(`${c.url}/#/tools`);
    const count = page.locator('.table-count');
    await count.getByText(/^1–50 of \d+ tool\(s\)/).waitFor();
    const table = page.getByRole('table', { name: 'Tools' });
    const search = page.getByLabel('Search');

    await search.pressSequentially('tool-1');
    await count.getByText(/^1–50 of 100 tool\(s\)/).waitFor();
    await search.press('2');
    // The ten tools 120–129, and those only; the count is the server's, over the whole inventory.
    await count.getByText(/^1–10 of 10 tool\(s\)/).waitFor();
    const ids = await dataRows(table).locator('a.mono').allTextContents();
    expect(ids).toHaveLength(10);
    expect(ids.every((id) => id.includes('tool-12'))).toBe(true);
    await search.press('3');
    await count.getByText(/^1–1 of 1 tool\(s\)/).waitFor();
    expect(await dataRows(table).locator('a.mono').allTextContents()).toEqual(['mcp__scale__tool-123']);

    // A search that matches nothing says so (after the server has looked at every tool).
    await search.fill('no-such-tool-anywhere');
    await page.getByText('No tool matches these filters.').waitFor();
    await count.getByText(/^0 tool\(s\)/).waitFor();
    expect(await dataRows(table).count()).toBe(0);
  });
});
