import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/tools/:id/usage', () => {
  it('says per tenant which roles allow, deny or lack a tool, and who reaches it', async () => {
    const r = await t.request('GET', '/v1/tools/core__text-completion/usage');
    expect(r.status, r.text).toBe(200);
    const acme = r.json.tenants.find((x: { tenant: string }) => x.tenant === 'acme-research');
    expect(acme.excluded).toBeNull();
    expect(acme.roles.find((x: { role: string }) => x.role === 'researcher').outcome).toBe('allow');
    expect(acme.subjects).toContain('agent:research-bot');
    expect(acme.recentDecisions).toEqual([]);
  });

  it('names a deny and an argument constraint of a role', async () => {
    const pol = await t.request('GET', '/v1/tenants/acme-research/policy');
    const policy = structuredClone(pol.json);
    policy.roles.analyst.deny = [...(policy.roles.analyst.deny ?? []), 'core__text-completion'];
    policy.roles.researcher.constraints = [
      { tools: ['core__text-completion'], otherwise: 'require_approval', arguments: { type: 'object' }, reason: 'long prompts need a person' },
    ];
    const put = await t.request('PUT', '/v1/tenants/acme-research/policy', { body: policy, headers: { 'if-match': pol.headers.get('etag')! } });
    expect(put.status, put.text).toBe(200);
    const r = await t.request('GET', '/v1/tools/core__text-completion/usage');
    const acme = r.json.tenants.find((x: { tenant: string }) => x.tenant === 'acme-research');
    expect(acme.roles.find((x: { role: string }) => x.role === 'analyst').outcome).toBe('denied');
    expect(acme.roles.find((x: { role: string }) => x.role === 'researcher').constraints).toEqual([
      { index: 0, reason: 'long prompts need a person', otherwise: 'require_approval' },
    ]);
  });

  it('covers only the tenants the caller may read, and 404s an unknown tool', async () => {
    const editor = await t.tokenFor('editor', ['globex-eng']);
    const r = await t.request('GET', '/v1/tools/core__text-completion/usage', { token: editor });
    expect(r.status).toBe(200);
    expect(r.json.tenants.map((x: { tenant: string }) => x.tenant)).toEqual(['globex-eng']);
    expect((await t.request('GET', '/v1/tools/core__nope/usage')).status).toBe(404);
    const runtime = await t.tokenFor('runtime', ['globex-eng']);
    expect((await t.request('GET', '/v1/tools/core__text-completion/usage', { token: runtime })).status).toBe(403);
  });
});

describe('GET /v1/subjects/:subject', () => {
  it("gives an agent's roles per tenant and what it would see, simulated on the draft", async () => {
    const r = await t.request('GET', `/v1/subjects/${encodeURIComponent('agent:research-bot')}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json.tenants).toHaveLength(1);
    const [acme] = r.json.tenants;
    expect(acme).toMatchObject({ tenant: 'acme-research', roles: ['researcher'] });
    const sim = await t.request('POST', '/v1/tenants/acme-research/simulate', { body: { subject: 'agent:research-bot', groups: acme.groups } });
    expect(acme.sees.tools).toEqual(sim.json.tools);
    expect(acme.recentDecisions).toEqual([]);
  });

  it('answers an unbound subject with no tenant, refuses a malformed one with its pointer, and hides unreadable tenants', async () => {
    expect((await t.request('GET', '/v1/subjects/agent:nobody')).json.tenants).toEqual([]);
    const bad = await t.request('GET', `/v1/subjects/${encodeURIComponent('agent with spaces')}`);
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].pointer).toBe('/path/subject');
    const outsider = await t.tokenFor('viewer', ['globex-eng']);
    expect((await t.request('GET', `/v1/subjects/${encodeURIComponent('agent:research-bot')}`, { token: outsider })).json.tenants).toEqual([]);
  });
});
