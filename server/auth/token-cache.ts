import type { ToolgateDatabase } from '../db/database.ts';
import type { TokensRow } from '../db/tables/tokens.ts';

/** How long a looked-up token is trusted without asking the database again. */
export const TOKEN_CACHE_MS = 2000;
// Last-use stamps are kept coarse so reads do not turn into a write per request.
const LAST_USED_EVERY_MS = 60_000;

type Entry = { row: TokensRow | undefined; until: number };

/**
 * Token lookups by hash, cached briefly: the bundle-pull path answers thousands of requests a
 * second with the same few tokens. A revocation clears the cache at once, in this process and (through
 * the cluster events) in every replica; a process that hears nothing sees it within TOKEN_CACHE_MS.
 */
export class TokenCache {
  private entries = new Map<string, Entry>();
  // Bumped by clear(): a lookup that began before a clear must not put its answer back afterwards.
  private generation = 0;

  constructor(private readonly database: ToolgateDatabase) {}

  async find(hash: string, now = Date.now()): Promise<TokensRow | undefined> {
    const hit = this.entries.get(hash);
    if (hit && hit.until > now) return hit.row;
    const generation = this.generation;
    const row = await this.database.db.selectFrom('tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
    if (this.entries.size > 10_000) this.entries.clear();
    if (generation === this.generation) this.entries.set(hash, { row, until: now + TOKEN_CACHE_MS });
    if (row && (!row.last_used_at || Date.parse(row.last_used_at) < now - LAST_USED_EVERY_MS)) {
      const at = new Date(now).toISOString();
      row.last_used_at = at;
      void this.database.db
        .updateTable('tokens')
        .set({ last_used_at: at })
        .where('id', '=', row.id)
        .execute()
        .catch(() => undefined);
    }
    return row;
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

const caches = new WeakMap<ToolgateDatabase, TokenCache>();

/** The token cache of a database (one per open database, so test servers never share one). */
export function tokenCacheFor(database: ToolgateDatabase): TokenCache {
  let cache = caches.get(database);
  if (!cache) {
    cache = new TokenCache(database);
    caches.set(database, cache);
  }
  return cache;
}
