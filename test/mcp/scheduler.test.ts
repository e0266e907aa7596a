import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { McpServer } from '../../policy-schemas/types.gen.ts';
import { listAuditEvents } from '../../server/audit/events.ts';
import { startMcpScheduler } from '../../server/mcp/scheduler.ts';
import { mcpServerStore, toolStore } from '../../server/store/inventory.ts';
import { StateFileServer, objectSchema } from '../fixtures/mcp/servers.ts';
import { type FixtureState, startHttpFixture } from '../fixtures/mcp/tool-list-server.ts';
import { type Harness, createHarness } from './harness.ts';

let h: Harness;
let stop: (() => Promise<void>) | undefined;
const fixtures: StateFileServer[] = [];

beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await stop?.();
  stop = undefined;
  await h.close();
});
afterAll(() => fixtures.forEach((f) => f.dispose()));

const tool = (name: string) => ({ name, description: `${name} tool`, inputSchema: objectSchema() });

async function addServer(server: McpServer): Promise<void> {
  await mcpServerStore.insert(h.deps.database.db, server.id, server, new Date().toISOString());
}

/** Waits for a condition the scheduler brings about on its own (generous deadline, no timing assertion). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

const hasTool = (id: string) => async () => (await toolStore.get(h.deps.database.db, id)) !== undefined;

describe('startMcpScheduler', () => {
  it('syncs a server with an interval at start, then on tools/list_changed over the open connection', async () => {
    const fixture = new StateFileServer({ tools: [tool('first')] });
    fixtures.push(fixture);
    // An interval far longer than the test: only the notification can bring the second tool.
    await addServer({ id: 'notify', label: 'Notifying', transport: fixture.transport(), syncIntervalSeconds: 86_400 });
    stop = startMcpScheduler(h.deps, { refreshMs: 60_000, debounceMs: 20 });
    await eventually(hasTool('mcp__notify__first'), 'the first sync');
    fixture.write({ tools: [tool('first'), tool('second')] });
    await eventually(hasTool('mcp__notify__second'), 'the sync after list_changed');
    const second = await toolStore.get(h.deps.database.db, 'mcp__notify__second');
    expect(second?.status).toBe('quarantined');
    const events = await listAuditEvents(h.deps.database.db, { entityId: 'mcp__notify__second' }, 0, 10);
    expect(events).toMatchObject([{ action: 'sync', actor: 'system', reason: 'tools/list_changed' }]);
  });

  it('re-syncs every interval, picking up servers created after it started', async () => {
    let state: FixtureState = { tools: [tool('a')] };
    const http = await startHttpFixture(() => state);
    try {
      stop = startMcpScheduler(h.deps, { refreshMs: 50, msPerSecond: 5 });
      await addServer({ id: 'periodic', label: 'Periodic', transport: { kind: 'http', url: http.url }, syncIntervalSeconds: 30 });
      await eventually(hasTool('mcp__periodic__a'), 'the first sync of a server created later');
      state = { tools: [tool('b')] };
      await eventually(async () => (await toolStore.get(h.deps.database.db, 'mcp__periodic__a'))?.status === 'removed', 'the periodic re-sync');
      expect((await toolStore.get(h.deps.database.db, 'mcp__periodic__b'))?.status).toBe('quarantined');
    } finally {
      await stop?.();
      stop = undefined;
      await http.close();
    }
  });

  it('leaves servers without an interval alone and records a failing server once', async () => {
    await addServer({ id: 'manual', label: 'Manual only', transport: { kind: 'stdio', command: 'toolgate-no-such-mcp-server-command' } });
    await addServer({ id: 'broken', label: 'Broken', transport: { kind: 'stdio', command: 'toolgate-no-such-mcp-server-command' }, syncIntervalSeconds: 30 });
    stop = startMcpScheduler(h.deps, { refreshMs: 60_000, msPerSecond: 2 });
    await eventually(async () => (await listAuditEvents(h.deps.database.db, { entityId: 'broken' }, 0, 10)).length > 0, 'the failed sync to be recorded');
    const broken = await mcpServerStore.get(h.deps.database.db, 'broken');
    expect(broken?.lastSync).toMatchObject({ ok: false, error: expect.stringContaining('MCP server "broken"') });
    // Let a few more intervals pass: the same failure is not written again.
    await new Promise((r) => setTimeout(r, 300));
    expect(await listAuditEvents(h.deps.database.db, { entityId: 'broken' }, 0, 10)).toHaveLength(1);
    expect((await mcpServerStore.get(h.deps.database.db, 'manual'))?.lastSync).toBeUndefined();
  });
});
