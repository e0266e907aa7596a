import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../server/cli/commands/mcp.ts';
import { listAuditEvents } from '../../server/audit/events.ts';
import { ToolgateDatabase } from '../../server/db/database.ts';
import { mcpServerStore, toolStore } from '../../server/store/inventory.ts';
import { StateFileServer, objectSchema, silentServer } from '../fixtures/mcp/servers.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-cli-'));
const dbFile = join(dir, 'toolgate.db');
const fixture = new StateFileServer({ tools: [{ name: 'lookup', description: 'Look up', inputSchema: objectSchema({ k: { type: 'string' } }) }] });
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
  await db.close();
});

afterAll(() => {
  if (savedDb === undefined) delete process.env.TOOLGATE_DB;
  else process.env.TOOLGATE_DB = savedDb;
  if (savedCommands === undefined) delete process.env.TOOLGATE_MCP_COMMANDS;
  else process.env.TOOLGATE_MCP_COMMANDS = savedCommands;
  fixture.dispose();
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
