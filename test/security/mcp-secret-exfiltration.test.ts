import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { everythingServer, hostileStdioServer } from '../fixtures/mcp/servers.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// A hostile stdio server is given two variables by name; it echoes them (and anything else it
// sees) into every field of tools/list, into errors and into stderr. Nothing of them may reach
// the inventory, the API, the audit log, logs, lastSync or a bundle.
const SECRETS = {
  HOSTILE_API_KEY: `sk-live-${Math.random().toString(36).slice(2)}-abcdef`,
  HOSTILE_DB_PASSWORD: `pw-${Math.random().toString(36).slice(2)}-zz`,
};
const NAMES = Object.keys(SECRETS);

let t: TestApp;
let logs = '';
beforeAll(async () => {
  Object.assign(process.env, SECRETS);
  t = await startTestApp({ settings: { mcpCommands: [process.execPath] } });
  t.deps.logger = pino({ level: 'debug' }, new Writable({ write: (chunk, _enc, done) => ((logs += String(chunk)), done()) }));
});
afterAll(async () => {
  for (const n of NAMES) delete process.env[n];
  await t.close();
});

async function everythingVisible(): Promise<string> {
  const parts = [logs];
  for (const path of ['/v1/tools', '/v1/mcp-servers', '/v1/audit/export?format=jsonl', '/v1/audit/export?format=csv', '/v1/audit?limit=1000']) {
    const r = await t.request('GET', path);
    expect(r.status, path).toBe(200);
    parts.push(r.text);
  }
  return parts.join('\n');
}

function expectNoSecret(text: string): void {
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(text, name).not.toContain(value);
    // Nor a recognisable piece of it.
    expect(text, name).not.toContain(value.slice(0, 12));
  }
}

let n = 0;
async function addServer(mode: 'leak' | 'error' | 'stderr'): Promise<string> {
  const id = `hostile-${mode}-${++n}`;
  const r = await t.request('POST', '/v1/mcp-servers', { body: { id, label: id, transport: hostileStdioServer(mode, NAMES) } });
  expect(r.status).toBe(201);
  return id;
}

describe('a hostile stdio server that echoes its environment', () => {
  afterEach(() => expectNoSecret(logs));

  it('imports its tools with every passed-through value masked, in names, descriptions and schemas', async () => {
    const id = await addServer('leak');
    const res = await t.request('POST', `/v1/mcp-servers/${id}/sync`);
    expect(res.status).toBe(200);
    expectNoSecret(res.text);
    const wipe = await t.request('GET', `/v1/tools/mcp__${id}__wipe_everything`);
    expect(wipe.status).toBe(200);
    expect(wipe.json.description).toContain('HOSTILE_API_KEY=***');
    expect(Object.keys(wipe.json.inputSchema.properties)).toContain('HOSTILE_API_KEY_***');
    expect(wipe.json.review.current.inputSchema.examples).toContain('***');
    expectNoSecret(await everythingVisible());
  });

  it('masks the values in the error it answers tools/list with', async () => {
    const id = await addServer('error');
    const res = await t.request('POST', `/v1/mcp-servers/${id}/sync`);
    expect(res.status).toBe(502);
    expect(res.json.detail).toContain('HOSTILE_DB_PASSWORD=***');
    expectNoSecret(res.text);
    expectNoSecret(await everythingVisible());
  });

  it('masks the values it writes to stderr before exiting', async () => {
    const id = await addServer('stderr');
    const res = await t.request('POST', `/v1/mcp-servers/${id}/sync`);
    expect(res.status).toBe(502);
    expect(res.json.lastSync.error).toContain('cannot start');
    expectNoSecret(res.text);
    expectNoSecret(await everythingVisible());
  });

  it('ships no passed-through value in a bundle, even once an admin approves the tool', async () => {
    const id = await addServer('leak');
    expect((await t.request('POST', `/v1/mcp-servers/${id}/sync`)).status).toBe(200);
    const toolPath = `/v1/tools/mcp__${id}__wipe_everything`;
    const tool = await t.request('GET', toolPath);
    const approved = await t.request('POST', `${toolPath}/approve`, {
      body: { definitionHash: tool.json.definitionHash },
      headers: { 'if-match': tool.headers.get('etag')! },
    });
    expect(approved.status).toBe(200);
    const patched = await t.request('PATCH', toolPath, { body: { redaction: { allow: ['leaked'] } }, headers: { 'if-match': approved.headers.get('etag')! } });
    expect(patched.status).toBe(200);
    const published = await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'ship the hostile tool' } });
    expect(published.status).toBe(201);
    const bundle = await t.request('GET', '/v1/tenants/acme-research/bundles/latest');
    expect(bundle.text).toContain(`mcp__${id}__wipe_everything`);
    expectNoSecret(bundle.text);
  });

  it('still imports a real server from npm normally when variables are passed to it', async () => {
    const r = await t.request('POST', '/v1/mcp-servers', { body: { id: 'everything', label: 'Everything', transport: { ...everythingServer(), env: NAMES } } });
    expect(r.status).toBe(201);
    const res = await t.request('POST', '/v1/mcp-servers/everything/sync');
    expect(res.status).toBe(200);
    const echo = await t.request('GET', '/v1/tools/mcp__everything__echo');
    expect(echo.json.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(echo.json.description).not.toContain('***');
  });
});
