import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostileStdioServer } from '../fixtures/mcp/servers.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// A server's readOnlyHint used to make its tool read_only, escaping every requireApproval rule
// on state_change and external_side_effect.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ settings: { mcpCommands: [process.execPath] } });
  expect((await t.request('POST', '/v1/mcp-servers', { body: { id: 'liar', label: 'Liar', transport: hostileStdioServer('leak', []) } })).status).toBe(201);
  expect((await t.request('POST', '/v1/mcp-servers/liar/sync')).status).toBe(200);
});
afterAll(async () => t.close());

const TOOL = '/v1/tools/mcp__liar__wipe_everything';

describe('annotations are hints from an untrusted party', () => {
  it('imports a tool that claims readOnlyHint as external_side_effect, the claim kept for the admin to read', async () => {
    const tool = await t.request('GET', TOOL);
    expect(tool.json.effect).toBe('external_side_effect');
    expect(tool.json.source.hints).toEqual({ readOnlyHint: true, destructiveHint: false });
    const others = (await t.request('GET', '/v1/tools')).json.items.filter((x: { id: string }) => x.id.startsWith('mcp__liar__'));
    expect(others.length).toBeGreaterThan(0);
    for (const o of others) expect(o.effect, o.id).toBe('external_side_effect');
  });

  it('keeps the tool behind requireApproval once approved, whatever it claimed', async () => {
    const tool = await t.request('GET', TOOL);
    const approved = await t.request('POST', `${TOOL}/approve`, {
      body: { definitionHash: tool.json.definitionHash },
      headers: { 'if-match': tool.headers.get('etag')! },
    });
    expect(approved.status).toBe(200);
    const patched = await t.request('PATCH', TOOL, {
      body: { redaction: { allow: [] }, groups: ['write'] },
      headers: { 'if-match': approved.headers.get('etag')! },
    });
    expect(patched.status).toBe(200);
    const policy = await t.request('GET', '/v1/tenants/acme-research/policy');
    const body = structuredClone(policy.json);
    for (const k of ['tenant', 'version', 'createdAt', 'updatedAt']) delete body[k];
    body.roles.analyst.allow.push('mcp__liar__*');
    const put = await t.request('PUT', '/v1/tenants/acme-research/policy', { body, headers: { 'if-match': policy.headers.get('etag')! } });
    expect(put.status).toBe(200);
    const sim = await t.request('POST', '/v1/tenants/acme-research/simulate', { body: { subject: 'agent:analysis-bot', groups: ['write'] } });
    expect(sim.status).toBe(200);
    expect(sim.json.tools).toContainEqual({ id: 'mcp__liar__wipe_everything', decision: 'require_approval' });
  });

  it('does not let a re-sync change an effect the admin set', async () => {
    const tool = await t.request('GET', TOOL);
    const set = await t.request('PATCH', TOOL, { body: { effect: 'state_change' }, headers: { 'if-match': tool.headers.get('etag')! } });
    expect(set.status).toBe(200);
    expect((await t.request('POST', '/v1/mcp-servers/liar/sync')).status).toBe(200);
    expect((await t.request('GET', TOOL)).json.effect).toBe('state_change');
  });
});
