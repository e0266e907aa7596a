import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { PUBLISH_ATTEMPTS, publishBundle } from '../../server/compiler/publish.ts';
import type { KeyStore } from '../../server/signing/key-store.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// A publish compiled and signed inside the write transaction: with one SQLite connection, every
// read and every other change waited for it.
const TENANT = 'acme-research';
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

/** The server's key store, with signing held until `release()` each time `hold` says so. */
function heldKeys(hold: (attempt: number) => boolean) {
  const real = t.deps.keys;
  let attempt = 0;
  let release!: () => void;
  let signing!: () => void;
  const reached = new Promise<void>((r) => (signing = r));
  const gate = new Promise<void>((r) => (release = r));
  const keys = Object.create(real) as KeyStore;
  keys.signer = async () => {
    attempt++;
    if (hold(attempt)) {
      signing();
      await gate;
    }
    return real.signer();
  };
  return { keys, release, reached, attempts: () => attempt };
}

const meta = { actor: 'system', requestId: null, reason: 'publish under load' };
const latest = async () => JSON.parse((await t.request('GET', `/v1/tenants/${TENANT}/bundles/latest`)).text) as Bundle;

async function editTool(description: string): Promise<number> {
  const cur = await t.request('GET', '/v1/tools/core__knowledge-query');
  const r = await t.request('PATCH', '/v1/tools/core__knowledge-query', { body: { description }, headers: { 'if-match': cur.headers.get('etag')! } });
  return r.status;
}

describe('a publish in progress', () => {
  it('lets reads and other changes through while it compiles and signs, then publishes the draft as it is at commit', async () => {
    const before = (await t.request('GET', `/v1/tenants/${TENANT}/bundles`)).json.items.length;
    const held = heldKeys((n) => n === 1);
    const publishing = publishBundle(t.deps, meta, TENANT, {}, held.keys);
    await held.reached;
    // The publish is between compiling and committing: the server still reads and writes.
    expect((await t.request('GET', '/v1/tools')).status).toBe(200);
    expect((await t.request('POST', '/v1/groups', { body: { name: 'made-during-publish' } })).status).toBe(201);
    expect(await editTool('Edited while a publish was signing')).toBe(200);
    held.release();
    const outcome = await publishing;
    expect(held.attempts()).toBe(2);
    expect(outcome).toMatchObject({ created: true, version: before + 1 });
    const bundle = await latest();
    expect(bundle.version).toBe(before + 1);
    expect(bundle.catalog.tools.find((x) => x.id === 'core__knowledge-query')).toMatchObject({ description: 'Edited while a publish was signing' });
  });

  it('does not start over for changes that leave this draft as it was', async () => {
    expect(await editTool('Settled before the publish')).toBe(200);
    const held = heldKeys((n) => n === 1);
    const publishing = publishBundle(t.deps, meta, TENANT, {}, held.keys);
    await held.reached;
    expect((await t.request('POST', '/v1/tokens', { body: { label: 'unrelated', role: 'auditor' } })).status).toBe(201);
    const other = await t.request('GET', '/v1/tenants/globex-eng');
    expect(
      (
        await t.request('PATCH', '/v1/tenants/globex-eng', {
          body: { name: 'Globex Engineering (renamed)' },
          headers: { 'if-match': other.headers.get('etag')! },
        })
      ).status,
    ).toBe(200);
    held.release();
    expect((await publishing).created).toBe(true);
    expect(held.attempts()).toBe(1);
  });

  it('publishes at once when nothing changed meanwhile', async () => {
    expect(await editTool('Quiet edit')).toBe(200);
    const held = heldKeys(() => false);
    const outcome = await publishBundle(t.deps, meta, TENANT, {}, held.keys);
    expect(held.attempts()).toBe(1);
    expect(outcome.created).toBe(true);
  });

  it('gives up with a 409 naming the reason when the draft changes during every attempt, writing nothing', async () => {
    expect(await editTool('Before the storm')).toBe(200);
    const versions = (await t.request('GET', `/v1/tenants/${TENANT}/bundles`)).json.items.length;
    const real = t.deps.keys;
    const keys = Object.create(real) as KeyStore;
    let n = 0;
    keys.signer = async () => {
      expect(await editTool(`storm ${++n}`)).toBe(200);
      return real.signer();
    };
    await expect(publishBundle(t.deps, meta, TENANT, {}, keys)).rejects.toMatchObject({
      status: 409,
      code: 'conflict',
      message: expect.stringContaining(`changed during each of ${PUBLISH_ATTEMPTS} attempts`),
    });
    expect(n).toBe(PUBLISH_ATTEMPTS);
    expect((await t.request('GET', `/v1/tenants/${TENANT}/bundles`)).json.items.length).toBe(versions);
  });

  it('keeps versions contiguous when publishes race each other', async () => {
    const start = (await t.request('GET', `/v1/tenants/${TENANT}/bundles`)).json.items.length;
    const results = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        expect((await t.request('POST', '/v1/groups', { body: { name: `race-${i}` } })).status).toBe(201);
        return t.request('POST', `/v1/tenants/${TENANT}/bundles`, { body: { reason: `race ${i}` } });
      }),
    );
    for (const r of results) expect([200, 201, 409]).toContain(r.status);
    const items = (await t.request('GET', `/v1/tenants/${TENANT}/bundles`)).json.items as Array<{ version: number }>;
    const versions = items.map((b) => b.version).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: versions.length }, (_, i) => i + 1));
    expect(versions.length).toBeGreaterThan(start);
  });
});
