import type { Actor } from '../context.ts';
import type { DbOrTx, ToolgateDatabase } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { tokenExpired } from '../auth/tokens.ts';

/** Who reports: a token's id, or `user:<sub>` for a person signed in without one. */
function reporterOf(actor: Actor): string {
  return actor.tokenId ?? `user:${actor.person?.sub ?? actor.label}`;
}

/**
 * A runtime reports only as itself: the first token to report under a runtime id of a tenant owns
 * it, and another token reporting under that id (decisions or status) is refused. When the owning
 * token has been revoked or has expired, the next token to report takes the id over: that is how a
 * runtime's token is rotated, and it needs a token that is valid now.
 */
export class RuntimeOwners {
  // Confirmed owners. An owner changes only when its token stops being valid, and then the new
  // reporter asks the database, so a hit that names the reporter is always still true.
  private owners = new Map<string, string>();

  constructor(private readonly database: ToolgateDatabase) {}

  /** Resolves when `actor` may report as `runtimeId` of `tenant`; throws 403 `runtime_id_taken` otherwise. */
  async claim(tenant: string, runtimeId: string, actor: Actor, pointer: string): Promise<void> {
    const reporter = reporterOf(actor);
    const key = `${tenant}\u0000${runtimeId}`;
    if (this.owners.get(key) === reporter) return;
    const owner = await this.database.change((tx) => claimIn(tx, tenant, runtimeId, reporter, new Date()));
    if (owner !== reporter) {
      throw new ApiError(403, 'runtime_id_taken', `runtime ${runtimeId} of tenant ${tenant} reports with another token; a runtime reports only as itself`, {
        errors: [{ pointer, message: 'belongs to the token that first reported under it' }],
      });
    }
    if (this.owners.size >= MAX_CACHED) this.owners.clear();
    this.owners.set(key, reporter);
  }

  /** Forgets what it knows (after a token change elsewhere, the database decides again). */
  clear(): void {
    this.owners.clear();
  }
}

const MAX_CACHED = 100_000;

/** The owner of a runtime id after `reporter` tried to claim it. */
async function claimIn(tx: DbOrTx, tenant: string, runtimeId: string, reporter: string, now: Date): Promise<string> {
  await tx
    .insertInto('runtime_owners')
    .values({ tenant, runtime_id: runtimeId, token_id: reporter, claimed_at: now.toISOString() })
    .onConflict((oc) => oc.columns(['tenant', 'runtime_id']).doNothing())
    .execute();
  const row = await tx
    .selectFrom('runtime_owners')
    .select('token_id')
    .where('tenant', '=', tenant)
    .where('runtime_id', '=', runtimeId)
    .executeTakeFirstOrThrow();
  if (row.token_id === reporter || row.token_id.startsWith('user:')) return row.token_id;
  const token = await tx.selectFrom('tokens').select(['id', 'expires_at']).where('id', '=', row.token_id).executeTakeFirst();
  if (token && !tokenExpired(token, now.getTime())) return row.token_id;
  // The owner's token was revoked or has expired: the id passes to the token reporting now.
  await tx
    .updateTable('runtime_owners')
    .set({ token_id: reporter, claimed_at: now.toISOString() })
    .where('tenant', '=', tenant)
    .where('runtime_id', '=', runtimeId)
    .where('token_id', '=', row.token_id)
    .execute();
  return reporter;
}
