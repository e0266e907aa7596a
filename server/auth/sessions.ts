import type { Context } from 'hono';
import { randomBytes } from 'node:crypto';
import type { AppEnv } from '../context.ts';
import type { DbOrTx } from '../db/database.ts';
import { sessionDeadline } from './authenticate.ts';
import { issueSessionCookie } from './session-cookie.ts';
import { hashSecret } from './tokens.ts';

/** Who a console session belongs to: a token, or a person signed in through single sign-on. */
export type SessionOwner =
  | { kind: 'token'; tokenId: string }
  | { kind: 'person'; sub: string; email: string | null; name: string | null; claims: Record<string, unknown>; access: unknown };

/**
 * Opens a console session: a random id (only its hash is stored) sent as the HttpOnly cookie, and
 * a CSRF token that changes made with the cookie must echo.
 */
export async function openSession(c: Context<AppEnv>, owner: SessionOwner): Promise<{ csrfToken: string }> {
  const { database, config } = c.get('deps');
  const sessionId = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const now = new Date();
  await database.db
    .insertInto('sessions')
    .values({
      id_hash: hashSecret(sessionId),
      token_id: owner.kind === 'token' ? owner.tokenId : null,
      ...(owner.kind === 'person'
        ? {
            user_sub: owner.sub,
            user_email: owner.email,
            user_name: owner.name,
            user_claims: JSON.stringify(owner.claims),
            user_access: JSON.stringify(owner.access),
            access_checked_at: now.toISOString(),
          }
        : {}),
      csrf_token: csrfToken,
      created_at: now.toISOString(),
      expires_at: new Date(sessionDeadline(config, now.getTime(), now.getTime())).toISOString(),
    })
    .execute();
  issueSessionCookie(c, sessionId);
  return { csrfToken };
}

/** Forgets sessions past their idle deadline. */
export async function pruneSessions(db: DbOrTx, now: Date): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', now.toISOString()).execute();
}

/** The CSRF token of the session a cookie names, if it exists. */
export async function sessionCsrfToken(db: DbOrTx, cookie: string): Promise<string | undefined> {
  const row = await db.selectFrom('sessions').select('csrf_token').where('id_hash', '=', hashSecret(cookie)).executeTakeFirst();
  return row?.csrf_token;
}

/** Ends the session a cookie names. */
export async function endSession(db: DbOrTx, cookie: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', hashSecret(cookie)).execute();
}
