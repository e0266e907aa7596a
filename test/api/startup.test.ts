import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { openToolgate } from '../../server/startup.ts';
import { ADMIN_TOKEN, startTestApp } from '../support/harness.ts';
import { join } from 'node:path';

describe('starting on an existing database', () => {
  it('does not seed again, nor fail, when an admin has emptied the inventory and tenants', async () => {
    const t = await startTestApp();
    for (const tenant of (await t.request('GET', '/v1/tenants')).json.items) {
      expect((await t.request('DELETE', `/v1/tenants/${tenant.id}`, { headers: { 'if-match': `"${tenant.version}"` } })).status).toBe(204);
    }
    for (const tool of (await t.request('GET', '/v1/tools')).json.items) {
      expect((await t.request('DELETE', `/v1/tools/${tool.id}`, { headers: { 'if-match': `"${tool.version}"` } })).status).toBe(204);
    }
    await t.deps.database.close();

    const settings = {
      host: '127.0.0.1',
      port: 0,
      dbFile: t.dbTarget,
      keysDir: join(t.dir, 'keys'),
      webDir: join(t.dir, 'web'),
      seed: 'demo' as const,
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
    };
    const again = await openToolgate(settings, pino({ level: 'silent' }));
    expect(await again.deps.database.db.selectFrom('tools').select('id').execute()).toEqual([]);
    expect(await again.deps.database.db.selectFrom('tenants').select('id').execute()).toEqual([]);
    await again.deps.database.close();
    await t.close();
  });
});
