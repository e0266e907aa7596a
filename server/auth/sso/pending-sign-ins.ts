import { createHash } from 'node:crypto';
import type { DbOrTx } from '../../db/database.ts';

/** A sign-in started at the identity provider and not finished yet. */
export type PendingSignIn = { nonce: string; codeVerifier: string; expiresAt: string };

// Only a hash of the state is kept: the state itself travels in the browser's cookie and the callback URL.
const stateHash = (state: string) => createHash('sha256').update(state, 'utf8').digest('hex');

/** Forgets sign-ins past their deadline; answers how many are still under way. */
export async function pruneSignIns(db: DbOrTx, now: Date): Promise<number> {
  await db.deleteFrom('sso_logins').where('expires_at', '<=', now.toISOString()).execute();
  const underWay = await db
    .selectFrom('sso_logins')
    .select((e) => e.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(underWay.n);
}

export async function recordSignIn(db: DbOrTx, p: { state: string; nonce: string; codeVerifier: string; now: Date; seconds: number }): Promise<void> {
  await db
    .insertInto('sso_logins')
    .values({
      state_hash: stateHash(p.state),
      nonce: p.nonce,
      code_verifier: p.codeVerifier,
      created_at: p.now.toISOString(),
      expires_at: new Date(p.now.getTime() + p.seconds * 1000).toISOString(),
    })
    .execute();
}

/** Takes the sign-in a state names, once: a second use (replay, or a reload) finds nothing. */
export async function takeSignIn(db: DbOrTx, state: string): Promise<PendingSignIn | undefined> {
  const row = await db.deleteFrom('sso_logins').where('state_hash', '=', stateHash(state)).returningAll().executeTakeFirst();
  return row && { nonce: row.nonce, codeVerifier: row.code_verifier, expiresAt: row.expires_at };
}
