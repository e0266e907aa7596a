import { afterEach, describe, expect, it, vi } from 'vitest';
import { ToolgateDatabase } from '../db/database.ts';
import { TOKEN_CACHE_MS, TokenCache } from './token-cache.ts';

describe('TokenCache', () => {
  let database: ToolgateDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  async function open() {
    database = new ToolgateDatabase(':memory:');
    await database.migrateToLatest();
    return { cache: new TokenCache(database), queries: vi.spyOn(database.db, 'selectFrom') };
  }

  it('answers many pulls that find the entry gone with one query', async () => {
    const { cache, queries } = await open();
    const rows = await Promise.all(Array.from({ length: 50 }, () => cache.find('sha256:unknown')));
    expect(rows.every((r) => r === undefined)).toBe(true);
    expect(queries).toHaveBeenCalledTimes(1);
    await cache.find('sha256:unknown');
    expect(queries).toHaveBeenCalledTimes(1);
  });

  it('does not let a lookup that began before clear() (a revocation) refill the cache after it', async () => {
    const { cache, queries } = await open();
    const before = cache.find('sha256:revoked');
    cache.clear();
    await before;
    await cache.find('sha256:revoked');
    expect(queries).toHaveBeenCalledTimes(2);
  });

  it('keeps sharing the lookup begun after clear() when the older one settles', async () => {
    const { cache, queries } = await open();
    const before = cache.find('sha256:t');
    cache.clear();
    const after = cache.find('sha256:t');
    await before; // the older lookup settling must not drop the newer one from the shared lookups
    const joined = cache.find('sha256:t');
    await Promise.all([after, joined]);
    expect(queries).toHaveBeenCalledTimes(2);
  });

  it('peeks at a looked-up row only while it is trusted, and never queries', async () => {
    const { cache, queries } = await open();
    const { insertToken, hashSecret } = await import('./tokens.ts');
    await insertToken(database!.db, { id: 't1', label: 'rt', role: 'runtime', tenants: ['acme'], secret: 'tg_peek', now: '2026-01-01T00:00:00.000Z' });
    const queriesBefore = queries.mock.calls.length;
    expect(cache.peek(hashSecret('tg_peek'), 1_000)).toBeUndefined();
    expect(queries).toHaveBeenCalledTimes(queriesBefore);
    const row = await cache.find(hashSecret('tg_peek'), 1_000);
    expect(row?.id).toBe('t1');
    expect(cache.peek(hashSecret('tg_peek'), 1_000 + TOKEN_CACHE_MS - 1)).toBe(row);
    expect(cache.peek(hashSecret('tg_peek'), 1_000 + TOKEN_CACHE_MS)).toBeUndefined();
    cache.clear();
    expect(cache.peek(hashSecret('tg_peek'), 1_000)).toBeUndefined();
    expect(queries).toHaveBeenCalledTimes(queriesBefore + 1);
  });
});
