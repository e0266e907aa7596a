import { createHash } from 'node:crypto';
import type { DbOrTx, ToolgateDatabase } from '../../db/database.ts';

/** A sign-in started at the identity provider and not finished yet. */
export type PendingSignIn = { nonce: string; codeVerifier: string; expiresAt: string };

/** How many sign-ins may be under way at once: from one client address, and from everyone. */
export type PendingLimits = { perAddress: number; total: number };

/** Why a sign-in could not be recorded: this address holds its share, or the whole store is full. */
export type RecordOutcome = { ok: true } | { ok: false; full: 'address'; retryAfter: number } | { ok: false; full: 'store' };

// Only a hash of the state is kept: the state itself travels in the browser's cookie and the callback URL.
const stateHash = (state: string) => createHash('sha256').update(state, 'utf8').digest('hex');

/**
 * Records a sign-in under way, unless its address already holds `perAddress` of them or the store
 * holds `total`. Expired ones are forgotten first. Counting and inserting are one write
 * transaction, so replicas sharing the database cannot overshoot together.
 */
export async function recordSignIn(
  database: ToolgateDatabase,
  p: { state: string; nonce: string; codeVerifier: string; address: string; now: Date; seconds: number; limits: PendingLimits },
): Promise<RecordOutcome> {
  return database.change(async (tx) => {
    await tx.deleteFrom('sso_logins').where('expires_at', '<=', p.now.toISOString()).execute();
    if ((await countSignIns(tx, p.address)) >= p.limits.perAddress) {
      // The address has room again when its oldest sign-in under way expires (or sooner, if one finishes).
      const oldest = await tx
        .selectFrom('sso_logins')
        .select((e) => e.fn.min('expires_at').as('at'))
        .where('client_address', '=', p.address)
        .executeTakeFirst();
      const ms = oldest?.at ? Date.parse(String(oldest.at)) - p.now.getTime() : p.seconds * 1000;
      return { ok: false, full: 'address', retryAfter: Math.max(1, Math.ceil(ms / 1000)) };
    }
    if ((await countSignIns(tx)) >= p.limits.total) return { ok: false, full: 'store' };
    await tx
      .insertInto('sso_logins')
      .values({
        state_hash: stateHash(p.state),
        nonce: p.nonce,
        code_verifier: p.codeVerifier,
        client_address: p.address,
        created_at: p.now.toISOString(),
        expires_at: new Date(p.now.getTime() + p.seconds * 1000).toISOString(),
      })
      .execute();
    return { ok: true };
  });
}

/** Sign-ins under way, from one address or from all. */
async function countSignIns(db: DbOrTx, address?: string): Promise<number> {
  let q = db.selectFrom('sso_logins').select((e) => e.fn.countAll<number>().as('n'));
  if (address !== undefined) q = q.where('client_address', '=', address);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** Takes the sign-in a state names, once: a second use (replay, or a reload) finds nothing. */
export async function takeSignIn(db: DbOrTx, state: string): Promise<PendingSignIn | undefined> {
  const row = await db.deleteFrom('sso_logins').where('state_hash', '=', stateHash(state)).returningAll().executeTakeFirst();
  return row && { nonce: row.nonce, codeVerifier: row.code_verifier, expiresAt: row.expires_at };
}
