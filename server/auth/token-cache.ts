import type { ToolgateDatabase } from '../db/database.ts';
import type { TokensRow } from '../db/tables/tokens.ts';

/** How long a looked-up token is trusted without asking the database again. */
export const TOKEN_CACHE_MS = 2000;
// Last-use stamps are kept coarse so reads do not turn into a write per request.
const LAST_USED_EVERY_MS = 60_000;

type Entry = { row: TokensRow | undefined; until: number; lookedUpAt: number };
type Lookup = { promise: Promise<TokensRow | undefined>; startedAt: number };

/**
 * Token lookups by hash, cached briefly: the bundle-pull path answers thousands of requests a
 * second with the same few tokens. A revocation clears the cache at once, in this process and (through
 * the cluster events) in every replica; a process that hears nothing sees it within TOKEN_CACHE_MS.
 */
export class TokenCache {
  private entries = new Map<string, Entry>();
  // Lookups under way: when an entry runs out, the many pulls then in flight for the same token
  // share one query instead of each sending its own.
  private pending = new Map<string, Lookup>();
  // Bumped by clear(): a lookup that started before a revocation must not refill the cache after it.
  private generation = 0;

  constructor(private readonly database: ToolgateDatabase) {}

  /**
   * The row a lookup of `hash` found while that answer is still trusted, without asking the
   * database; undefined when nothing fresh is cached (or the token is unknown: only find() says so).
   */
  peek(hash: string, now = Date.now()): TokensRow | undefined {
    const hit = this.entries.get(hash);
    return hit && hit.until > now ? hit.row : undefined;
  }

  find(hash: string, now = Date.now()): Promise<TokensRow | undefined> {
    return this.findLookedUpSince(hash, Number.NEGATIVE_INFINITY, now);
  }

  /**
   * The row of `hash` as the database holds it at `since` or later: a cached answer or a lookup
   * under way counts only if it started then or after. A held request checks its token again
   * this way when it wakes, so a revocation committed before the wake is always seen (on any
   * replica), while the many pulls one publish wakes together still share one query per token.
   */
  findLookedUpSince(hash: string, since: number, now = Date.now()): Promise<TokensRow | undefined> {
    const hit = this.entries.get(hash);
    if (hit && hit.until > now && hit.lookedUpAt >= since) return Promise.resolve(hit.row);
    const under = this.pending.get(hash);
    if (under && under.startedAt >= since) return under.promise;
    const lookup: Lookup = {
      startedAt: now,
      promise: this.lookUp(hash, now).finally(() => {
        // A clear() or a fresher lookup meanwhile may have taken this place.
        if (this.pending.get(hash) === lookup) this.pending.delete(hash);
      }),
    };
    this.pending.set(hash, lookup);
    return lookup.promise;
  }

  private async lookUp(hash: string, now: number): Promise<TokensRow | undefined> {
    const generation = this.generation;
    const row = await this.database.db.selectFrom('tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
    if (this.entries.size > 10_000) this.entries.clear();
    if (generation === this.generation) this.entries.set(hash, { row, until: now + TOKEN_CACHE_MS, lookedUpAt: now });
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
    this.pending.clear();
  }
}
