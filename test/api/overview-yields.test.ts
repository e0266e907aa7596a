import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Overview, Tool } from '../../policy-schemas/types.gen.ts';
import { toolStore } from '../../server/store/inventory.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// The overview compiles every tenant's draft and compares it with what is published: with
// thousands of tools that is real work, and it must not hold the event loop for all of it (a
// bundle pull or /healthz arriving meanwhile is answered in between). Shown here by the order in
// which things run, on an inventory of 600 extra tools; the console-scale benchmark times it.

const EXTRA_TOOLS = 600;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  const now = new Date().toISOString();
  await t.deps.database.change(async (tx) => {
    for (let i = 0; i < EXTRA_TOOLS; i++) {
      const id = `core__scale-${String(i).padStart(3, '0')}`;
      const tool: Tool = {
        id,
        description: `Tool ${i} of a large inventory.`,
        effect: 'read_only',
        inputSchema: { type: 'object' },
        redaction: { allow: ['result'] },
      };
      await toolStore.insert(tx, id, tool, now);
    }
  });
}, 120_000);
afterAll(async () => t.close());

/** Other work that re-queues itself with setImmediate, as a waiting request's I/O would run; counts its turns during `work`. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const other = () => {
    if (!running) return;
    turns++;
    setImmediate(other);
  };
  setImmediate(other);
  try {
    return { result: await work(), turns };
  } finally {
    running = false;
  }
}

describe('GET /v1/overview with a large inventory', () => {
  it('lets other work run between tenants and steps, and answers the same as before', async () => {
    const { result, turns } = await turnsDuring(() => t.request('GET', '/v1/overview'));
    expect(result.status).toBe(200);
    const overview = result.json as Overview;
    expect(overview.tenants.length).toBeGreaterThanOrEqual(2);
    // At least one turn per tenant (and one before the inventory is read).
    expect(turns).toBeGreaterThan(overview.tenants.length);
    expect(overview.tenants.every((x) => x.draft.differs)).toBe(true);

    // Asked again with nothing changed: the answer is the same (the parts' hashes come from the cache).
    const again = (await t.request('GET', '/v1/overview')).json as Overview;
    expect(again.tenants.map((x) => x.draft)).toEqual(overview.tenants.map((x) => x.draft));
  });

  it('names the inventory as what differs after one of the 600 tools changed since the publish', async () => {
    const draftOf = async () => ((await t.request('GET', '/v1/overview')).json as Overview).tenants.find((x) => x.id === 'globex-eng')!.draft;
    expect((await t.request('POST', '/v1/tenants/globex-eng/bundles', { body: { reason: 'baseline' } })).status).toBe(201);
    expect(await draftOf()).toEqual({ differs: false, changes: [] });
    const tool = await t.request('GET', '/v1/tools/core__scale-599');
    const patched = await t.request('PATCH', '/v1/tools/core__scale-599', {
      body: { description: 'Reworded.' },
      headers: { 'if-match': tool.headers.get('etag')! },
    });
    expect(patched.status).toBe(200);
    expect(await draftOf()).toEqual({ differs: true, changes: ['inventory'] });
  });

  it('still refuses a role that may not read tenants while the inventory is large', async () => {
    const runtime = await t.tokenFor('runtime', ['acme-research']);
    const res = await t.request('GET', '/v1/overview', { token: runtime });
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ code: 'forbidden' });
  });
});
