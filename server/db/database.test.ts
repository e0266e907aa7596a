import { describe, expect, it } from 'vitest';
import { ToolgateDatabase } from './database.ts';

const row = (name: string) => ({ name, body: '{}', version: 1, created_at: 'now', updated_at: 'now' });

describe('group commit', () => {
  it('commits concurrent changes together and rolls back only the one that failed', async () => {
    const d = new ToolgateDatabase(':memory:');
    await d.migrateToLatest();
    const results = await Promise.allSettled([
      d.change(async (tx) => tx.insertInto('states').values(row('a')).execute()),
      d.change(async (tx) => {
        await tx.insertInto('states').values(row('b')).execute();
        throw new Error('refused');
      }),
      d.change(async (tx) => tx.insertInto('states').values(row('c')).execute()),
      d.change(async (tx) => tx.insertInto('states').values(row('a')).execute()), // duplicate key
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    const names = (await d.db.selectFrom('states').select('name').orderBy('name').execute()).map((r) => r.name);
    expect(names).toEqual(['a', 'c']);
    await d.close();
  });

  it('lets a later change see what an earlier one in the same batch wrote', async () => {
    const d = new ToolgateDatabase(':memory:');
    await d.migrateToLatest();
    const [, count] = await Promise.all([
      d.change(async (tx) => tx.insertInto('states').values(row('x')).execute()),
      d.change(async (tx) => (await tx.selectFrom('states').selectAll().execute()).length),
    ]);
    expect(count).toBe(1);
    await d.close();
  });
});
