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
