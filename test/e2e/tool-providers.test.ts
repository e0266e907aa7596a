import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYDANTIC_CREATE_ISSUE_SCHEMA, ROOT_UNION_SCHEMA, StateFileServer } from '../fixtures/mcp/servers.ts';
import { type Console, startConsole } from './harness.ts';

// An imported MCP server's tools as an admin meets them: the name the server gives each one beside
// its id, and which model providers' wire formats carry its input schema unchanged.
let c: Console;
let page: Page;

const fixture = new StateFileServer({
  tools: [
    { name: 'github.create_issue', description: 'Open an issue', inputSchema: PYDANTIC_CREATE_ISSUE_SCHEMA },
    { name: 'fs/open', description: 'Open a path or a URL', inputSchema: ROOT_UNION_SCHEMA },
  ],
});

beforeAll(async () => {
  c = await startConsole();
  ({ page } = await c.newSession({ width: 1600, height: 1000 }));
  page.on('dialog', (d) => void d.accept().catch(() => undefined));
  await c.login(page);
  expect((await c.api('POST', '/v1/mcp-servers', { id: 'hub', label: 'Hub', transport: fixture.transport() })).status).toBe(201);
  expect((await c.api('POST', '/v1/mcp-servers/hub/sync', {})).status).toBe(200);
});

afterAll(async () => {
  fixture.dispose();
  await c?.close();
});

const go = async (path: string) => {
  await page.goto(`${c.url}/#${path}`);
  await page.reload();
};

describe('imported tools in the console', () => {
  it('lists each tool with its MCP name beside the id and a badge per model provider', async () => {
    await go('/tools?source=mcp');
    const table = page.getByRole('table', { name: 'Tools' });
    const row = table.getByRole('row').filter({ has: page.getByRole('link', { name: 'mcp__hub__github_create_issue' }) });
    await row.waitFor();
    expect(await row.innerText()).toContain('named github.create_issue on its MCP server');
    const providers = row.getByRole('cell').last();
    const text = await providers.textContent();
    expect(text).toContain('OpenAI function ✓: carried unchanged');
    expect(text).toContain('Anthropic ✓: carried unchanged');
    expect(text).toContain('OpenAI strict ✗: stops at /inputSchema/additionalProperties');

    const union = table.getByRole('row').filter({ has: page.getByRole('link', { name: 'mcp__hub__fs_open' }) });
    expect(await union.innerText()).toContain('named fs/open on its MCP server');
    await c.shot(page, 'tools-providers');
    expect(await union.getByRole('cell').last().textContent()).toContain(
      'Anthropic ✗: stops at /inputSchema/anyOf: Anthropic tools refuse `anyOf` at the root',
    );
  });

  it("says on a tool's page where its schema stops each provider, and follows the schema as it is edited", async () => {
    await go('/tools/mcp__hub__fs_open');
    await page.getByText('named fs/open on MCP server hub').waitFor();
    const note = page.getByRole('region', { name: 'Model providers' });
    await note.waitFor();
    const noteText = await note.innerText();
    expect(noteText).toContain('/inputSchema/anyOf: OpenAI function tools refuse `anyOf` at the root');
    expect(noteText).toContain('/inputSchema/anyOf: Anthropic tools refuse `anyOf` at the root');
    expect(noteText).toContain('/inputSchema/anyOf/0/additionalProperties');
    expect(noteText).not.toContain('carried unchanged');
    await note.scrollIntoViewIfNeeded();
    await c.shot(page, 'tool-providers');

    const strictReady = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false };
    await page.getByLabel('Input schema').fill(JSON.stringify(strictReady, null, 2));
    await expect.poll(async () => (await note.innerText()).match(/carried unchanged/g)?.length ?? 0).toBe(3);
    // A text that does not parse leaves the note on the last schema that did.
    await page.getByLabel('Input schema').fill('{ "type": ');
    expect((await note.innerText()).match(/carried unchanged/g)?.length).toBe(3);
  });
});
