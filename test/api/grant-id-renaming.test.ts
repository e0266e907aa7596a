import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renameGrantsWithoutUrl } from '../../migrations/012-grant-urls-and-runtime-owners.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// Migration 012's renaming of grants that no URL can name, on both engines (this suite also runs
// on PostgreSQL): the grants get URL-safe ids, the renames are audited, and the chain verifies.

const tenant = 'acme-research';
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('grants stored under ids without a URL', () => {
  it('are renamed, audited, and can then be read and deleted through their URLs', async () => {
    const db = t.deps.database.db;
    const seeded = await db.selectFrom('grants').select('body').where('tenant', '=', tenant).executeTakeFirstOrThrow();
    const now = new Date().toISOString();
    for (const id of ['.', '..']) {
      const body = JSON.stringify({ ...JSON.parse(seeded.body), connectionId: id });
      await db.insertInto('grants').values({ tenant, connection_id: id, body, version: 1, created_at: now, updated_at: now }).execute();
    }
    expect(await renameGrantsWithoutUrl(db as unknown as Kysely<unknown>)).toBe(2);
    const renamed = ((await t.request('GET', `/v1/tenants/${tenant}/grants`)).json.items as { connectionId: string }[])
      .map((g) => g.connectionId)
      .filter((id) => id.startsWith('renamed-'));
    expect(renamed).toHaveLength(2);
    for (const id of renamed) {
      const read = await t.request('GET', `/v1/tenants/${tenant}/grants/${id}`);
      expect(read.status).toBe(200);
      expect((await t.request('DELETE', `/v1/tenants/${tenant}/grants/${id}`, { headers: { 'if-match': read.headers.get('etag')! } })).status).toBe(204);
    }
    const audit = (await t.request('GET', '/v1/audit?entityType=grant&order=desc&limit=6')).json.items as { actor: string; action: string; entityId: string }[];
    expect(audit.filter((e) => e.actor === 'system').map((e) => `${e.action} ${e.entityId}`)).toEqual(
      expect.arrayContaining(['delete .', 'delete ..', ...renamed.map((id) => `create ${id}`)]),
    );
    expect((await t.request('GET', '/v1/audit/verify')).json.ok).toBe(true);
  });
});
