import { describe, expect, it } from 'vitest';
import { ToolgateDatabase } from '../db/database.ts';
import { StatusRecorder } from './status-recorder.ts';

describe('runtime status recorder', () => {
  it('keeps only the most recently heard runtimes of a tenant', async () => {
    const d = new ToolgateDatabase(':memory:');
    await d.migrateToLatest();
    await d.db.insertInto('tenants').values({ id: 't', name: 'T', version: 1, created_at: 'x', updated_at: 'x' }).execute();
    const r = new StatusRecorder(d, 1, undefined, 3);
    for (let i = 0; i < 6; i++) r.record('t', { runtimeId: `rt-${i}`, version: 1, health: 'fresh' }, `2030-01-01T00:00:0${i}.000Z`);
    await r.flush();
    const ids = (await d.db.selectFrom('runtimes').select('runtime_id').orderBy('runtime_id').execute()).map((x) => x.runtime_id);
    expect(ids).toEqual(['rt-3', 'rt-4', 'rt-5']);
    await d.close();
  });
});
