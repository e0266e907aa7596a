import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ seed: false });
});
afterAll(async () => t.close());

describe('groups and states', () => {
  it('always has the default group and the undefined state, and will not delete them', async () => {
    expect((await t.request('GET', '/v1/groups/default')).status).toBe(200);
    expect((await t.request('GET', '/v1/states/undefined')).status).toBe(200);
    const g = await t.request('DELETE', '/v1/groups/default', { headers: { 'if-match': '"1"' } });
    expect(g.status).toBe(409);
    const s = await t.request('DELETE', '/v1/states/undefined', { headers: { 'if-match': '"1"' } });
    expect(s.status).toBe(409);
  });

  it('creates groups with includes and names an unknown include', async () => {
    expect((await t.request('POST', '/v1/groups', { body: { name: 'read', description: 'reading' } })).status).toBe(201);
    expect((await t.request('POST', '/v1/groups', { body: { name: 'write', includes: ['read'] } })).status).toBe(201);
    const bad = await t.request('POST', '/v1/groups', { body: { name: 'admin', includes: ['write', 'superuser'] } });
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('unknown_reference');
    expect(bad.json.errors).toEqual([expect.objectContaining({ pointer: '/includes/1', message: 'unknown group "superuser"' })]);
  });

  it('rejects an include cycle, naming the path, and changes nothing', async () => {
    await t.request('POST', '/v1/groups', { body: { name: 'admin', includes: ['write'] } });
    const r = await t.request('PUT', '/v1/groups/read', { body: { name: 'read', includes: ['admin'] }, headers: { 'if-match': '"1"' } });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('cycle');
    expect(r.json.errors[0].message).toContain('read → admin → write → read');
    expect((await t.request('GET', '/v1/groups/read')).json.includes).toEqual([]);
  });

  it('rejects a group that includes itself', async () => {
    const r = await t.request('POST', '/v1/groups', { body: { name: 'selfish', includes: ['selfish'] } });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('cycle');
  });

  it('refuses to delete a group still included by another', async () => {
    const r = await t.request('DELETE', '/v1/groups/read', { headers: { 'if-match': '"1"' } });
    expect(r.status).toBe(409);
    expect(r.json.errors[0].message).toContain('group write includes read');
  });

  it('refuses to delete a state a tool moves to, and deletes it once unused', async () => {
    await t.request('POST', '/v1/states', { body: { name: 'review' } });
    await t.request('POST', '/v1/tools', {
      body: { id: 'core__submit', description: 'submit', inputSchema: { type: 'object' }, effect: 'state_change', state: 'review', redaction: { allow: [] } },
    });
    const blocked = await t.request('DELETE', '/v1/states/review', { headers: { 'if-match': '"1"' } });
    expect(blocked.status).toBe(409);
    expect(blocked.json.errors[0].message).toContain('core__submit');
    await t.request('DELETE', '/v1/tools/core__submit', { headers: { 'if-match': '"1"' } });
    expect((await t.request('DELETE', '/v1/states/review', { headers: { 'if-match': '"1"' } })).status).toBe(204);
  });

  it('validates names', async () => {
    const r = await t.request('POST', '/v1/states', { body: { name: 'bad name' } });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/name');
    expect((await t.request('POST', '/v1/groups', { body: { name: '*' } })).status).toBe(400);
  });
});
