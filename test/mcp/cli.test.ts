import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../server/cli/commands/mcp.ts';
import { run as tools } from '../../server/cli/commands/tools.ts';
import { listAuditEvents } from '../../server/audit/events.ts';
import { ToolgateDatabase } from '../../server/db/database.ts';
import { mcpServerStore, toolStore } from '../../server/store/inventory.ts';
import { PYDANTIC_CREATE_ISSUE_SCHEMA, ROOT_UNION_SCHEMA, StateFileServer, objectSchema, silentServer } from '../fixtures/mcp/servers.ts';
import { MCP_BUNDLE_SUBJECT, mcpBundle } from '../gateway/mcp-bundle.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-cli-'));
const dbFile = join(dir, 'toolgate.db');
const fixture = new StateFileServer({ tools: [{ name: 'lookup', description: 'Look up', inputSchema: objectSchema({ k: { type: 'string' } }) }] });
const strictReady = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false };
const named = new StateFileServer({
  tools: [
    { name: 'github.create_issue', description: 'Open an issue', inputSchema: PYDANTIC_CREATE_ISSUE_SCHEMA },
    { name: 'fs/open', description: 'Open a path or a URL', inputSchema: ROOT_UNION_SCHEMA },
    { name: 'search', description: 'Search', inputSchema: strictReady },
  ],
});
const savedDb = process.env.TOOLGATE_DB;
const savedCommands = process.env.TOOLGATE_MCP_COMMANDS;

function capture() {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: { log: (l: string) => lines.push(l), error: (l: string) => errors.push(l) } };
}

beforeAll(async () => {
  process.env.TOOLGATE_DB = dbFile;
  // The operator allows Node, which runs every fixture server.
  process.env.TOOLGATE_MCP_COMMANDS = process.execPath;
  const db = new ToolgateDatabase(dbFile);
  await db.migrateToLatest();
  const now = new Date().toISOString();
  await mcpServerStore.insert(db.db, 'local', { id: 'local', label: 'Local', transport: fixture.transport() }, now);
  await mcpServerStore.insert(db.db, 'mute', { id: 'mute', label: 'Mute', transport: silentServer() }, now);
  await mcpServerStore.insert(db.db, 'named', { id: 'named', label: 'Named', transport: named.transport() }, now);
  await db.close();
});

afterAll(() => {
  if (savedDb === undefined) delete process.env.TOOLGATE_DB;
  else process.env.TOOLGATE_DB = savedDb;
  if (savedCommands === undefined) delete process.env.TOOLGATE_MCP_COMMANDS;
  else process.env.TOOLGATE_MCP_COMMANDS = savedCommands;
  fixture.dispose();
  named.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function inspect<T>(fn: (db: ToolgateDatabase) => Promise<T>): Promise<T> {
  const db = new ToolgateDatabase(dbFile);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

describe('toolgate mcp sync', () => {
  it('imports the server tools quarantined and prints what changed', async () => {
    const c = capture();
    expect(await run(['sync', 'local'], c.out)).toBe(0);
    expect(c.lines[0]).toBe('synced MCP server local');
    expect(c.lines).toContain('added    mcp__local__lookup');
    const tool = await inspect((db) => toolStore.get(db.db, 'mcp__local__lookup'));
    expect(tool?.status).toBe('quarantined');
    const events = await inspect((db) => listAuditEvents(db.db, { action: 'sync' }, 0, 100));
    expect(events.map((e) => [e.actor, e.entityType, e.entityId, e.reason])).toEqual([
      ['system', 'tool', 'mcp__local__lookup', 'toolgate mcp sync'],
      ['system', 'mcp-server', 'local', 'toolgate mcp sync'],
    ]);
  });

  it('exits 1 naming the server when it does not answer in time', async () => {
    const c = capture();
    expect(await run(['sync', 'mute', '--timeout', '700'], c.out)).toBe(1);
    expect(c.errors[0]).toBe('toolgate mcp sync: MCP server "mute" failed to start or initialize: no answer within 700 ms');
  });

  it('refuses to run a command the operator did not list in TOOLGATE_MCP_COMMANDS', async () => {
    process.env.TOOLGATE_MCP_COMMANDS = '/usr/bin/true';
    try {
      const c = capture();
      expect(await run(['sync', 'local'], c.out)).toBe(1);
      expect(c.errors[0]).toMatch(
        /^toolgate mcp sync: MCP server "local" is not allowed to connect: \/transport\/command is not a command the operator allows/,
      );
    } finally {
      process.env.TOOLGATE_MCP_COMMANDS = process.execPath;
    }
  });

  it('exits 2 with usage on bad arguments', async () => {
    for (const args of [[], ['list'], ['sync'], ['sync', 'a', 'b'], ['sync', 'local', '--timeout', 'soon'], ['sync', 'local', '--bogus']]) {
      const c = capture();
      expect(await run(args, c.out)).toBe(2);
      expect(c.errors.join('\n')).toMatch(/usage: toolgate mcp sync ID|--timeout/);
    }
  });

  it('is wired into the toolgate command and exits 1 for an unknown server', async () => {
    const main = fileURLToPath(new URL('../../server/cli/main.ts', import.meta.url));
    const result = await promisify(execFile)(process.execPath, ['--import', import.meta.resolve('tsx'), main, 'mcp', 'sync', 'nobody'], {
      env: { ...process.env, TOOLGATE_DB: dbFile },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('MCP server nobody does not exist');
  });
});

describe('toolgate tools list after an import', () => {
  it('lists each imported tool with the name its server gives it and which wire encoders carry its schema', async () => {
    const synced = capture();
    expect(await run(['sync', 'named'], synced.out), synced.errors.join('\n')).toBe(0);
    const c = capture();
    expect(await tools(['list'], c.out)).toBe(0);
    const listed = (JSON.parse(c.lines.join('\n')) as Array<{ id: string; originalName?: string; providers: Record<string, string> }>).filter((t) =>
      t.id.startsWith('mcp__named__'),
    );
    expect(listed).toEqual([
      {
        id: 'mcp__named__fs_open',
        originalName: 'fs/open',
        status: 'quarantined',
        effect: 'external_side_effect',
        groups: ['default'],
        providers: {
          openai: 'stops at /inputSchema/anyOf: OpenAI function tools refuse `anyOf` at the root',
          'openai-strict': 'stops at /inputSchema/anyOf: strict mode refuses `anyOf` at the root (and 3 more)',
          anthropic: 'stops at /inputSchema/anyOf: Anthropic tools refuse `anyOf` at the root',
        },
      },
      {
        id: 'mcp__named__github_create_issue',
        originalName: 'github.create_issue',
        status: 'quarantined',
        effect: 'external_side_effect',
        groups: ['default'],
        providers: {
          openai: 'carried unchanged',
          'openai-strict': 'stops at /inputSchema/additionalProperties: strict mode needs `"additionalProperties": false` on every object (and 2 more)',
          anthropic: 'carried unchanged',
        },
      },
      {
        id: 'mcp__named__search',
        originalName: 'search',
        status: 'quarantined',
        effect: 'external_side_effect',
        groups: ['default'],
        providers: { openai: 'carried unchanged', 'openai-strict': 'carried unchanged', anthropic: 'carried unchanged' },
      },
    ]);
  });

  it('prints the wire specs unchanged and says on stderr which ones that provider would refuse', async () => {
    const bundleFile = join(dir, 'bundle.json');
    const bundle = mcpBundle('acme', 1, 'named', {
      tools: [
        { name: 'open', description: 'Open a path or a URL', inputSchema: ROOT_UNION_SCHEMA },
        { name: 'search', description: 'Search', inputSchema: strictReady },
      ],
    });
    writeFileSync(bundleFile, JSON.stringify(bundle));
    const openai = capture();
    expect(await tools(['list', '--bundle', bundleFile, '--subject', MCP_BUNDLE_SUBJECT], openai.out)).toBe(0);
    const specs = JSON.parse(openai.lines.join('\n')) as Array<{ function: { name: string; parameters: unknown } }>;
    expect(specs.map((s) => s.function.name)).toEqual(['mcp__named__open', 'mcp__named__search']);
    expect(specs[0].function.parameters).toEqual(ROOT_UNION_SCHEMA);
    expect(openai.errors).toEqual([
      'toolgate tools list: mcp__named__open: OpenAI function stops at /inputSchema/anyOf: OpenAI function tools refuse `anyOf` at the root',
    ]);
    const anthropic = capture();
    expect(await tools(['list', '--bundle', bundleFile, '--subject', MCP_BUNDLE_SUBJECT, '--format', 'anthropic'], anthropic.out)).toBe(0);
    expect(anthropic.errors).toEqual([
      'toolgate tools list: mcp__named__open: Anthropic stops at /inputSchema/anyOf: Anthropic tools refuse `anyOf` at the root',
    ]);
  });
});
