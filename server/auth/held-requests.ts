import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { SESSION_COOKIE, bearerActor, bearerHash, findSession, sessionLive } from './authenticate.ts';
import { personActor } from './sso/person-session.ts';
import { tokenExpired } from './tokens.ts';

const REVOKED_WHILE_HELD = 'The credential was revoked, expired or signed out while the request waited; nothing was sent';

/**
 * Revocation reaches held requests: a long poll was authenticated when it arrived, and when it
 * wakes (a publish, a decision, its time up) the credential is checked again, against the
 * database as it is now, before anything is answered. A token revoked meanwhile gets 401, on
 * whichever replica holds the poll (the token is looked up afresh, not taken from a cache filled
 * before the wake), and so does a console session that ended.
 */
export async function requireStillAuthenticated(c: Context<AppEnv>): Promise<void> {
  const actor = c.get('actor');
  const { database, config, tokens } = c.get('deps');
  const now = Date.now();
  const auth = c.req.header('authorization');
  if (auth !== undefined) {
    const hash = bearerHash(auth);
    const checked = hash === undefined ? undefined : bearerActor(await tokens.findLookedUpSince(hash, now, now), now);
    if (checked?.ok && checked.actor.tokenId === actor?.tokenId) return;
    throw new ApiError(401, 'unauthorized', REVOKED_WHILE_HELD);
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  const session = cookie === undefined ? undefined : await findSession(database, cookie);
  if (!session || !sessionLive(session, config, now)) throw new ApiError(401, 'unauthorized', REVOKED_WHILE_HELD);
  if (session.token_id !== null) {
    // A token's session: the token must still exist (revocation deletes it) and not have expired.
    if (session.id === null || tokenExpired({ expires_at: session.token_expires_at }, now) || session.id !== actor?.tokenId)
      throw new ApiError(401, 'unauthorized', REVOKED_WHILE_HELD);
    return;
  }
  if (session.user_sub === null || session.user_sub !== actor?.person?.sub) throw new ApiError(401, 'unauthorized', REVOKED_WHILE_HELD);
  // A person's session: their access is judged again (a removed mapping ends it with 401).
  await personActor({ database, config }, session, now);
}
