import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { etag } from './support.ts';

// A tool that policy tests name used to delete with 204: the tests then named a tool the tests
// route itself refuses (so they could not even be saved back unchanged), and every publish of the
// tenant failed its tests until an admin forced it. Deleting it is a 409 naming every test, as for
// any other referrer.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

async function createTool(id: string): Promise<void> {
  const r = await t.request('POST', '/v1/tools', {
    body: { id, description: `probe ${id}`, effect: 'read_only', groups: ['default'], inputSchema: { type: 'object' } },
  });
  expect(r.status).toBe(201);
}

async function putTests(tenant: string, tests: unknown[]): Promise<void> {
  const path = `/v1/tenants/${tenant}/tests`;
  const r = await t.request('PUT', path, { headers: { 'if-match': await etag(t, path) }, body: { tests } });
  expect(r.status, r.text).toBe(200);
}

const deleteTool = async (id: string) => t.request('DELETE', `/v1/tools/${id}`, { headers: { 'if-match': await etag(t, `/v1/tools/${id}`) } });

describe('deleting a tool that policy tests name', () => {
  const expectations: [string, (id: string) => Record<string, unknown>, string][] = [
    ['visible', (id) => ({ visible: [id] }), 'visible/0'],
    ['hidden', (id) => ({ hidden: { [id]: 'no_role' } }), 'hidden/ID'],
    ['decisions', (id) => ({ decisions: { [id]: 'allow' } }), 'decisions/ID'],
  ];
  for (const [kind, expect_, tail] of expectations) {
    it(`is a 409 naming the test when it expects the tool ${kind}, and the tool stays`, async () => {
      const id = `core__named-${kind}`;
      await createTool(id);
      await putTests('acme-research', [{ name: `names ${kind}`, request: { subject: 'agent:research-bot' }, expect: expect_(id) }]);
      const r = await deleteTool(id);
      expect(r.status).toBe(409);
      expect(r.json.errors).toEqual([expect.objectContaining({ pointer: `/tenants/acme-research/tests/0/expect/${tail.replace('ID', id)}`, code: 'in_use' })]);
      expect(r.json.errors[0].message).toContain(`test "names ${kind}" of tenant acme-research`);
      expect((await t.request('GET', `/v1/tools/${id}`)).status).toBe(200);
      // What is stored still passes its own route's judge: the tests save back unchanged.
      const tests = (await t.request('GET', '/v1/tenants/acme-research/tests')).json.tests;
      await putTests('acme-research', tests);
    });
  }

  it('names every test of every tenant that names it', async () => {
    const id = 'core__named-everywhere';
    await createTool(id);
    await putTests('acme-research', [
      { name: 'a', request: { subject: 'agent:research-bot' }, expect: { visible: [id] } },
      { name: 'b', request: { subject: 'agent:research-bot' }, expect: { hidden: { [id]: 'no_role' }, decisions: { [id]: 'allow' } } },
    ]);
    await putTests('globex-eng', [{ name: 'c', request: { subject: 'agent:x' }, expect: { hidden: { [id]: 'no_role' } } }]);
    const r = await deleteTool(id);
    expect(r.status).toBe(409);
    expect((r.json.errors as { pointer: string }[]).map((e) => e.pointer)).toEqual([
      `/tenants/acme-research/tests/0/expect/visible/0`,
      `/tenants/acme-research/tests/1/expect/hidden/${id}`,
      `/tenants/acme-research/tests/1/expect/decisions/${id}`,
      `/tenants/globex-eng/tests/0/expect/hidden/${id}`,
    ]);
  });

  it('deletes once no test names it any more', async () => {
    const id = 'core__named-then-freed';
    await createTool(id);
    await putTests('acme-research', [{ name: 'frees', request: { subject: 'agent:research-bot' }, expect: { visible: [id] } }]);
    expect((await deleteTool(id)).status).toBe(409);
    await putTests('acme-research', []);
    await putTests('globex-eng', []);
    expect((await deleteTool(id)).status).toBe(204);
    expect((await t.request('GET', `/v1/tools/${id}`)).status).toBe(404);
  });
});
