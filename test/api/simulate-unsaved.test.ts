import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

const base = '/v1/tenants/globex-eng';
const request = { subject: 'agent:coding-bot', groups: ['basic'] };
const visibleIds = (r: { json: { tools: { id: string }[] } }) => r.json.tools.map((x) => x.id);

describe('simulate with an unsaved policy', () => {
  it('evaluates the policy sent with the request, stores nothing, and audits nothing', async () => {
    const saved = await t.request('GET', `${base}/policy`);
    const before = await t.request('POST', `${base}/simulate`, { body: request });
    expect(visibleIds(before)).not.toContain('core__knowledge-query');

    const edited = structuredClone(saved.json);
    edited.roles.coder.allow.push('core__knowledge-*');
    const auditBefore = (await t.request('GET', '/v1/audit/verify')).json.count;
    const trial = await t.request('POST', `${base}/simulate`, { body: { ...request, policy: edited } });
    expect(trial.status).toBe(200);
    expect(visibleIds(trial)).toContain('core__knowledge-query');

    const after = await t.request('GET', `${base}/policy`);
    expect(after.json.version).toBe(saved.json.version);
    expect(visibleIds(await t.request('POST', `${base}/simulate`, { body: request }))).not.toContain('core__knowledge-query');
    expect((await t.request('GET', '/v1/audit/verify')).json.count).toBe(auditBefore);
  });

  it('answers an invalid unsaved policy with pointers into it', async () => {
    const r = await t.request('POST', `${base}/simulate`, { body: { ...request, policy: { roles: { coder: { allow: ['bad pattern'] } } } } });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/policy/roles/coder/allow/0');
  });

  it('answers an unsaved policy naming an unknown role with a compile error', async () => {
    const r = await t.request('POST', `${base}/simulate`, { body: { ...request, policy: { bindings: { 'agent:coding-bot': ['ghost'] } } } });
    expect(r.status).toBe(422);
    expect(r.json.code).toBe('compile_error');
    expect(r.json.errors.some((e: { pointer: string }) => e.pointer.startsWith('/policy/bindings'))).toBe(true);
  });

  it('lets a viewer try an edit without being able to save it', async () => {
    const viewer = await t.tokenFor('viewer', ['globex-eng']);
    const saved = await t.request('GET', `${base}/policy`);
    const r = await t.request('POST', `${base}/simulate`, { token: viewer, body: { ...request, policy: saved.json } });
    expect(r.status).toBe(200);
  });
});

describe('publish without a body', () => {
  it('takes the reason from the Toolgate-Reason header when no body is sent', async () => {
    const r = await t.request('POST', '/v1/tenants/acme-research/bundles', { headers: { 'toolgate-reason': 'header only' } });
    expect([200, 201]).toContain(r.status);
    const versions = (await t.request('GET', '/v1/tenants/acme-research/bundles')).json.items;
    expect(versions[0].reason).toBe('header only');
  });

  it('still asks for a reason when there is none', async () => {
    const r = await t.request('POST', '/v1/tenants/acme-research/bundles');
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/reason');
  });
});

describe('a tool that loses its redaction allowlist', () => {
  it('is filtered with no_redaction and does not stop the tenant from publishing', async () => {
    const tool = await t.request('GET', '/v1/tools/core__knowledge-query');
    const { redaction: _r, ...rest } = tool.json;
    expect((await t.request('PUT', '/v1/tools/core__knowledge-query', { body: rest, headers: { 'if-match': tool.headers.get('etag')! } })).status).toBe(200);
    const sim = await t.request('POST', '/v1/tenants/acme-research/simulate', { body: { subject: 'agent:research-bot', groups: ['knowledge'] } });
    expect(sim.status).toBe(200);
    expect(sim.json.filtered).toContainEqual({ id: 'core__knowledge-query', reason: 'no_redaction' });
    const pub = await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'still publishable' } });
    expect(pub.status).toBe(201);
  });
});
