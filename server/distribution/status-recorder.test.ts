import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolgateDatabase } from '../db/database.ts';
import { listRuntimes } from './runtimes-store.ts';
import { StatusRecorder } from './status-recorder.ts';

let database: ToolgateDatabase;

beforeEach(async () => {
  database = new ToolgateDatabase(':memory:');
  await database.migrateToLatest();
  const now = new Date().toISOString();
  for (const id of ['acme', 'globex']) await database.db.insertInto('tenants').values({ id, name: id, version: 1, created_at: now, updated_at: now }).execute();
});

afterEach(async () => {
  await database.close();
});

describe('StatusRecorder', () => {
  it('stores nothing until flushed, then the newest report of each runtime', async () => {
    const r = new StatusRecorder(database, 60_000);
    r.record('acme', { runtimeId: 'a', version: 1, health: 'fresh' }, '2026-01-01T00:00:00.000Z');
    r.record('acme', { runtimeId: 'a', version: 2, health: 'stale', lastError: 'unreachable' }, '2026-01-01T00:00:01.000Z');
    r.record('acme', { runtimeId: 'b', version: null, health: 'none', lastError: 'bad_signature', detail: 'cache refused' }, '2026-01-01T00:00:02.000Z');
    expect(await listRuntimes(database.db, 'acme', 2)).toEqual([]);
    await r.flush();
    const rows = await listRuntimes(database.db, 'acme', 2);
    expect(rows).toEqual([
      { tenant: 'acme', runtimeId: 'b', version: null, revision: null, health: 'none', lastError: 'bad_signature', detail: 'cache refused', reportedAt: '2026-01-01T00:00:02.000Z', behind: null },
      { tenant: 'acme', runtimeId: 'a', version: 2, revision: null, health: 'stale', lastError: 'unreachable', detail: null, reportedAt: '2026-01-01T00:00:01.000Z', behind: 0 },
    ]);
  });

  it('flushes on its own after the delay', async () => {
    const r = new StatusRecorder(database, 10);
    r.record('globex', { runtimeId: 'g', version: 3, health: 'fresh' }, new Date().toISOString());
    for (let i = 0; i < 200 && (await listRuntimes(database.db, 'globex', 5)).length === 0; i++) await new Promise((res) => setTimeout(res, 10));
    expect(await listRuntimes(database.db, 'globex', 5)).toMatchObject([{ runtimeId: 'g', version: 3, behind: 2 }]);
  });

  it('drops reports of a tenant deleted before the flush and keeps the others', async () => {
    const errors: unknown[] = [];
    const r = new StatusRecorder(database, 60_000, (e) => errors.push(e));
    r.record('acme', { runtimeId: 'a', version: 1, health: 'fresh' }, new Date().toISOString());
    r.record('globex', { runtimeId: 'g', version: 1, health: 'fresh' }, new Date().toISOString());
    await database.db.deleteFrom('tenants').where('id', '=', 'globex').execute();
    await r.flush();
    expect(errors).toEqual([]);
    expect((await listRuntimes(database.db, 'acme', 1)).map((x) => x.runtimeId)).toEqual(['a']);
    expect(await listRuntimes(database.db, 'globex', 1)).toEqual([]);
  });
});
