import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_OFFERED_TOOLS, MAX_TOOL_LIST_PAGES, fetchMcpTools, openMcpSession } from '../../server/mcp/client.ts';
import {
  StateFileServer,
  crashingServer,
  everythingServer,
  garbageServer,
  jsonNoiseServer,
  memoryServer,
  missingCommand,
  objectSchema,
  silentServer,
  silentServerWithPid,
  wrongShapeServer,
  TEST_MCP_POLICY,
} from '../fixtures/mcp/servers.ts';
import { type FixtureState, startHttpFixture } from '../fixtures/mcp/tool-list-server.ts';

const policy = TEST_MCP_POLICY;
const many = (n: number): FixtureState['tools'] =>
  Array.from({ length: n }, (_, i) => ({ name: `t${i}`, description: `tool ${i}`, inputSchema: objectSchema() }));

describe('MCP client against reference servers from npm', () => {
  it('lists the tools of server-everything with their read-only annotations', async () => {
    const r = await fetchMcpTools({ id: 'everything', transport: everythingServer() }, { policy });
    if (!r.ok) throw new Error(r.message);
    const echo = r.value.find((t) => t.name === 'echo');
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { message: expect.any(Object) } });
    expect(echo?.annotations?.readOnlyHint).toBe(true);
    expect(r.value.some((t) => t.annotations?.readOnlyHint === false)).toBe(true);
  });

  it('lists the tools of server-memory', async () => {
    const r = await fetchMcpTools({ id: 'memory', transport: memoryServer() }, { policy });
    if (!r.ok) throw new Error(r.message);
    expect(r.value.map((t) => t.name)).toEqual(expect.arrayContaining(['create_entities', 'read_graph', 'search_nodes']));
  });
});

describe('MCP client against the SDK test server', () => {
  const fixtures: StateFileServer[] = [];
  afterAll(() => fixtures.forEach((f) => f.dispose()));

  it('follows nextCursor through every page of tools/list', async () => {
    const f = new StateFileServer({ tools: many(7), pageSize: 3 });
    fixtures.push(f);
    const r = await fetchMcpTools({ id: 'paged', transport: f.transport() }, { policy });
    if (!r.ok) throw new Error(r.message);
    expect(r.value.map((t) => t.name)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
  });

  it('follows 200 pages and imports 5,000 tools, the bounds themselves', async () => {
    const pages = new StateFileServer({ tools: many(MAX_TOOL_LIST_PAGES), pageSize: 1 });
    const tools = new StateFileServer({ tools: many(MAX_OFFERED_TOOLS), pageSize: 2_500 });
    fixtures.push(pages, tools);
    const byPage = await fetchMcpTools({ id: 'paged', transport: pages.transport() }, { policy });
    if (!byPage.ok) throw new Error(byPage.message);
    expect(byPage.value).toHaveLength(200);
    expect(byPage.value.at(-1)?.name).toBe('t199');
    const all = await fetchMcpTools({ id: 'large', transport: tools.transport() }, { policy });
    if (!all.ok) throw new Error(all.message);
    expect(all.value).toHaveLength(5_000);
  });

  it('stops past 200 pages, past 5,000 tools and at a repeated cursor with a fixed-form error', async () => {
    const pages = new StateFileServer({ tools: many(MAX_TOOL_LIST_PAGES + 1), pageSize: 1 });
    const tools = new StateFileServer({ tools: many(MAX_OFFERED_TOOLS + 1), pageSize: 2_500 });
    const loop = new StateFileServer({ tools: many(3), pageSize: 1, repeatCursor: 'next-please' });
    fixtures.push(pages, tools, loop);
    expect(await fetchMcpTools({ id: 'endless', transport: pages.transport() }, { policy })).toEqual({
      ok: false,
      code: 'mcp_error',
      message: 'MCP server "endless" failed (phase: tools/list, code: too_many_pages, limit: 200)',
    });
    expect(await fetchMcpTools({ id: 'huge', transport: tools.transport() }, { policy })).toEqual({
      ok: false,
      code: 'mcp_error',
      message: 'MCP server "huge" failed (phase: tools/list, code: too_many_tools, limit: 5000)',
    });
    // The cursor is the server's text: it never reaches the message.
    expect(await fetchMcpTools({ id: 'loop', transport: loop.transport() }, { policy })).toEqual({
      ok: false,
      code: 'mcp_error',
      message: 'MCP server "loop" failed (phase: tools/list, code: cursor_repeated)',
    });
  });

  it('passes only the named environment variables, read at connect time', async () => {
    const f = new StateFileServer({ tools: [], envProbe: true });
    fixtures.push(f);
    const env = { PATH: process.env.PATH, MCP_FIXTURE_NAMED: 'named-value', MCP_FIXTURE_OTHER: 'other-value' };
    const r = await fetchMcpTools({ id: 'env', transport: f.transport(['MCP_FIXTURE_NAMED', 'MCP_FIXTURE_ABSENT']) }, { policy, env });
    if (!r.ok) throw new Error(r.message);
    const seen = r.value.find((t) => t.name === 'env_probe')?.description?.split(',') ?? [];
    expect(seen).toContain('MCP_FIXTURE_NAMED');
    expect(seen).toContain('PATH');
    expect(seen).not.toContain('MCP_FIXTURE_OTHER');
    expect(seen).not.toContain('MCP_FIXTURE_ABSENT');
  });
});

describe('MCP client over streamable HTTP', () => {
  let state: FixtureState = { tools: many(2) };
  const http = startHttpFixture(() => state);
  afterAll(async () => (await http).close());

  it('lists tools from a server on 127.0.0.1', async () => {
    const { url } = await http;
    const r = await fetchMcpTools({ id: 'web', transport: { kind: 'http', url } }, { policy });
    if (!r.ok) throw new Error(r.message);
    expect(r.value.map((t) => t.name)).toEqual(['t0', 't1']);
  });

  it('reports tools/list_changed while connected', async () => {
    const fixture = await http;
    let notified!: () => void;
    const changed = new Promise<void>((resolve) => (notified = resolve));
    const opened = await openMcpSession({ id: 'web', transport: { kind: 'http', url: fixture.url } }, { policy, onToolsChanged: () => notified() });
    if (!opened.ok) throw new Error(opened.message);
    try {
      state = { tools: many(3) };
      // The notification travels on the session's server-sent event stream, opened right after connecting.
      for (let i = 0; i < 50; i++) {
        await fixture.notifyChanged();
        const done = await Promise.race([changed.then(() => true), new Promise((r) => setTimeout(() => r(false), 100))]);
        if (done) break;
      }
      await changed;
      const again = await opened.value.listTools();
      if (!again.ok) throw new Error(again.message);
      expect(again.value).toHaveLength(3);
    } finally {
      await opened.value.close();
    }
  });

  it('stops at a repeated cursor over HTTP with the same fixed-form error, quoting nothing the server sent', async () => {
    const { url } = await http;
    const before = state;
    state = { tools: many(3), pageSize: 1, repeatCursor: 'https://internal.example/secret-page' };
    try {
      const r = await fetchMcpTools({ id: 'web', transport: { kind: 'http', url } }, { policy });
      expect(r).toEqual({ ok: false, code: 'mcp_error', message: 'MCP server "web" failed (phase: tools/list, code: cursor_repeated)' });
    } finally {
      state = before;
    }
  });

  it('names the server when nothing listens at the URL', async () => {
    const r = await fetchMcpTools({ id: 'nowhere', transport: { kind: 'http', url: 'http://127.0.0.1:9/mcp' } }, { policy, timeoutMs: 3000 });
    expect(r).toMatchObject({ ok: false, code: 'mcp_error', message: expect.stringContaining('MCP server "nowhere"') });
  });
});

describe('MCP client failures', () => {
  // Generous: these fail on their own long before it, even on a loaded machine.
  const quick = { timeoutMs: 10_000 };

  it('says so when the command does not exist', async () => {
    const r = await fetchMcpTools({ id: 'ghost', transport: missingCommand() }, { ...quick, policy });
    expect(r).toEqual({ ok: false, code: 'mcp_error', message: 'MCP server "ghost" failed to start or initialize: the command was not found' });
  });

  it('says so when the process exits, with its stderr', async () => {
    const r = await fetchMcpTools({ id: 'crash', transport: crashingServer() }, { ...quick, policy });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.message).toContain('MCP server "crash"');
      expect(r.message).toContain('connection closed');
      expect(r.message).toContain('fixture: cannot start');
    }
  });

  it('times out on a server that never answers', async () => {
    const r = await fetchMcpTools({ id: 'mute', transport: silentServer() }, { policy, timeoutMs: 800 });
    expect(r).toEqual({ ok: false, code: 'mcp_error', message: 'MCP server "mute" failed to start or initialize: no answer within 800 ms' });
  });

  it('stops a server that never answers instead of leaving it running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-pid-'));
    try {
      const pidFile = join(dir, 'pid');
      const r = await fetchMcpTools({ id: 'mute', transport: silentServerWithPid(pidFile) }, { policy, timeoutMs: 800 });
      expect(r.ok).toBe(false);
      const pid = Number(readFileSync(pidFile, 'utf8'));
      const alive = () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      // Well under the SDK's own two-second grace period, which is what would otherwise end it.
      for (let i = 0; i < 30 && alive(); i++) await new Promise((res) => setTimeout(res, 50));
      expect(alive()).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a server that prints something that is not MCP', async () => {
    const r = await fetchMcpTools({ id: 'noise', transport: garbageServer() }, { ...quick, policy });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(/^MCP server "noise" failed to start or initialize: it answered something that is not MCP/);
  });

  it('refuses a server that prints JSON that is not JSON-RPC', async () => {
    const r = await fetchMcpTools({ id: 'json-noise', transport: jsonNoiseServer() }, { ...quick, policy });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(/^MCP server "json-noise" failed to start or initialize: it answered something that is not MCP/);
  });

  it('refuses a tools/list answer of the wrong shape', async () => {
    const r = await fetchMcpTools({ id: 'odd', transport: wrongShapeServer() }, { ...quick, policy });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.message).toBe(
        'MCP server "odd" tools/list failed: its answer does not have the shape MCP requires (tools: Invalid input: expected array, received string)',
      );
  });

  it('never puts the value of a passed-through variable into an error', async () => {
    const transport = {
      kind: 'stdio' as const,
      command: process.execPath,
      args: ['-e', 'process.stderr.write("key=" + process.env.MCP_FIXTURE_KEY + "\\n"); process.exit(1)'],
      env: ['MCP_FIXTURE_KEY'],
    };
    const r = await fetchMcpTools(
      { id: 'leaky', transport },
      { policy, ...quick, env: { PATH: process.env.PATH, MCP_FIXTURE_KEY: 'value-that-must-not-leak' } },
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.message).toContain('key=***');
      expect(r.message).not.toContain('value-that-must-not-leak');
    }
  });

  it('never leaks part of a secret that a cut of the stderr tail would split', async () => {
    const key = 'uak_9f8e7d6c5b4a39281706f5e4d3c2b1a0ZZ';
    // The key, then enough padding that the kept tail starts in the middle of it.
    for (const pad of [263, 280, 290, 296]) {
      const script = `process.stderr.write("upstream rejected key " + process.env.MCP_FIXTURE_KEY + "0".repeat(${pad})); process.exit(1)`;
      const transport = { kind: 'stdio' as const, command: process.execPath, args: ['-e', script], env: ['MCP_FIXTURE_KEY'] };
      const r = await fetchMcpTools({ id: 'leaky', transport }, { policy, ...quick, env: { PATH: process.env.PATH, MCP_FIXTURE_KEY: key } });
      expect(r.ok).toBe(false);
      if (!r.ok) {
        for (let k = 4; k <= key.length; k++) expect(r.message, `pad ${pad}`).not.toContain(key.slice(-k));
      }
    }
  });
});
