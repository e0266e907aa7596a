import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchMcpTools } from '../../server/mcp/client.ts';
import { guardedFetch } from '../../server/mcp/guarded-fetch.ts';
import { guardedLookup, parseMcpAllowHosts } from '../../server/mcp/transport-policy.ts';
import { type HostileHttp, startHostileHttp } from '../fixtures/mcp/hostile-server.ts';
import { type Harness, createHarness } from '../mcp/harness.ts';
import { freePort } from '../support/free-port.ts';

// An admin-typed http transport used to make the server fetch internal addresses and store up
// to 1,000 characters of the answer where any viewer reads it.
let h: Harness;
let hostile: HostileHttp;
beforeAll(async () => {
  h = await createHarness({ commands: [], allowHosts: [] });
  hostile = await startHostileHttp();
});
afterAll(async () => {
  await hostile.close();
  await h.close();
});

const create = (id: string, url: string) => h.call('admin', 'POST', '/v1/mcp-servers', { id, label: id, transport: { kind: 'http', url } });

describe('an http transport may not point inside the network unless the operator allows the host', () => {
  const internal = [
    'http://127.0.0.1:8787/internal',
    'http://127.1/internal',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0.0.0.0:22/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
    'http://[fe80::1]/',
    'http://10.0.0.5/',
    'http://172.16.1.1/',
    'http://192.168.1.1/admin',
    'http://100.100.100.200/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'https://localhost/',
    'http://api.localhost/',
  ];
  for (const url of internal) {
    it(`refuses to save ${url} with a 400 naming /transport/url`, async () => {
      const res = await create('inside', url);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { errors: Array<{ pointer: string; code: string; message: string }> };
      expect(body.errors).toContainEqual(
        expect.objectContaining({ pointer: '/transport/url', code: 'transport_not_allowed', message: expect.stringContaining('TOOLGATE_MCP_ALLOW_HOSTS') }),
      );
    });
  }

  it('refuses other schemes', async () => {
    for (const url of ['file:///etc/passwd', 'gopher://127.0.0.1/', 'ftp://example.com/']) {
      expect((await create('scheme', url)).status, url).toBe(400);
    }
  });

  it('accepts a public host at save time (its addresses are checked when connecting)', async () => {
    expect((await create('public', 'https://mcp.example.com/mcp')).status).toBe(201);
  });

  it('refuses at connect time, without a request, when the host is no longer allowed', async () => {
    h.deps.config.mcp = { commands: [], allowHosts: ['127.0.0.1'] };
    expect((await create('was-allowed', hostile.internalUrl)).status).toBe(201);
    h.deps.config.mcp = { commands: [], allowHosts: [] };
    const res = await h.call('admin', 'POST', '/v1/mcp-servers/was-allowed/sync');
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).toContain('is not allowed to connect');
    expect(text).not.toContain(hostile.internalSecret);
  });

  it('checks the resolved address of a host name, not just its spelling', async () => {
    const lookup = guardedLookup({ commands: [], allowHosts: [] });
    const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('localhost', {}, (err) => resolve(err)));
    expect(refused?.code).toBe('EDESTINATION');
    expect(refused?.message).toMatch(/resolves to (127\.0\.0\.1|::1), a loopback address/);
    const allowed = guardedLookup({ commands: [], allowHosts: ['localhost'] });
    const address = await new Promise<unknown>((resolve) => allowed('localhost', {}, (_err, a) => resolve(a)));
    expect(String(address)).toMatch(/^(127\.0\.0\.1|::1)$/);
  });

  it('connects to an allowlisted host name at the address it resolves to', async () => {
    const { fetch, close } = guardedFetch({ commands: [], allowHosts: ['localhost'] });
    try {
      const res = await fetch(hostile.internalUrl.replace('127.0.0.1', 'localhost'));
      expect(res.status).toBe(500);
      await res.arrayBuffer();
    } finally {
      await close();
    }
  });

  it('checks every redirect hop: a redirect to a refused address is never requested', async () => {
    // The hostile server is allowed by address; what it redirects to is not.
    const { fetch, close } = guardedFetch({ commands: [], allowHosts: ['127.0.0.1'] });
    try {
      for (const target of ['http://169.254.169.254/latest/meta-data/', 'http://[::1]:1/internal', 'http://localhost:1/internal']) {
        const first = await fetch(hostile.redirectUrl(target), { method: 'POST', body: '{}' });
        expect(first.status).toBe(307);
        await expect(fetch(new URL(first.headers.get('location')!, hostile.redirectUrl(target)))).rejects.toThrow(/TOOLGATE_MCP_ALLOW_HOSTS/);
      }
    } finally {
      await close();
    }
  });

  it('parses TOOLGATE_MCP_ALLOW_HOSTS by commas or spaces, brackets and case ignored', () => {
    expect(parseMcpAllowHosts(' Internal.Example., 10.0.0.5 [::1]')).toEqual(['internal.example', '10.0.0.5', '::1']);
    expect(parseMcpAllowHosts(undefined)).toEqual([]);
  });
});

describe('a failed sync stores a fixed-form error, never the remote answer', () => {
  beforeAll(() => {
    h.deps.config.mcp = { commands: [], allowHosts: ['127.0.0.1'] };
  });

  it('records status, phase and code for an internal endpoint answering 500 with secrets', async () => {
    expect((await create('internal', hostile.internalUrl)).status).toBe(201);
    const res = await h.call('admin', 'POST', '/v1/mcp-servers/internal/sync');
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).not.toContain(hostile.internalSecret);
    expect(text).not.toContain('db password');
    const server = (await (await h.call('viewer', 'GET', '/v1/mcp-servers/internal')).json()) as { lastSync: { ok: boolean; error: string } };
    expect(server.lastSync).toMatchObject({ ok: false, error: 'MCP server "internal" failed (phase: initialize, code: http_status, status: 500)' });
  });

  it('records a redirect it did not follow without its body', async () => {
    expect((await create('moved', hostile.redirectUrl('http://169.254.169.254/'))).status).toBe(201);
    const res = await h.call('admin', 'POST', '/v1/mcp-servers/moved/sync');
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).not.toContain(hostile.internalSecret);
    expect(text).toMatch(/phase: initialize, code: (destination_not_allowed|redirect_not_followed)/);
  });

  it('names the code when nothing listens, without any remote text', async () => {
    const port = await freePort();
    const r = await fetchMcpTools(
      { id: 'closed', transport: { kind: 'http', url: `http://127.0.0.1:${port}/mcp` } },
      { policy: { commands: [], allowHosts: ['127.0.0.1'] }, timeoutMs: 3000 },
    );
    expect(r).toEqual({ ok: false, code: 'mcp_error', message: 'MCP server "closed" failed (phase: initialize, code: econnrefused)' });
  });

  it('still imports from the hostile server when allowed, as quarantined external_side_effect tools', async () => {
    expect((await create('hostile', hostile.mcpUrl)).status).toBe(201);
    const res = await h.call('admin', 'POST', '/v1/mcp-servers/hostile/sync');
    expect(res.status).toBe(200);
    const wipe = (await (await h.call('admin', 'GET', '/v1/tools/mcp__hostile__wipe_everything')).json()) as { status: string; effect: string };
    expect(wipe).toMatchObject({ status: 'quarantined', effect: 'external_side_effect' });
  });
});
