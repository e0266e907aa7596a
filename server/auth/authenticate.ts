import { getCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { timingSafeEqual } from 'node:crypto';
import type { Actor, AppEnv, Role } from '../context.ts';
import { ApiError } from '../errors.ts';
import { tokenCacheFor } from './token-cache.ts';
import { hashSecret, tokenExpired } from './tokens.ts';

export const SESSION_COOKIE = 'toolgate_session';
export const CSRF_HEADER = 'X-CSRF-Token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Resolves the actor from `Authorization: Bearer` or the console's session cookie. Cookie-borne
 * changes must carry the session's CSRF token; bearer tokens cannot be sent by a browser on its own.
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const { database } = c.get('deps');
  const auth = c.req.header('authorization');
  let actor: Actor | null = null;
  if (auth !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (!m) throw new ApiError(401, 'unauthorized', 'Authorization must be "Bearer <token>"');
    const row = await tokenCacheFor(database).find(hashSecret(m[1]));
    if (!row) throw new ApiError(401, 'unauthorized', 'The token is unknown or was revoked');
    if (tokenExpired(row)) throw new ApiError(401, 'unauthorized', 'The token has expired');
    actor = toActor(row, 'bearer');
  } else {
    const cookie = getCookie(c, SESSION_COOKIE);
    if (cookie) {
      const session = await database.db
        .selectFrom('sessions')
        .innerJoin('tokens', 'tokens.id', 'sessions.token_id')
        .select(['tokens.id', 'tokens.label', 'tokens.role', 'tokens.tenants', 'sessions.csrf_token', 'sessions.expires_at', 'tokens.expires_at as token_expires_at'])
        .where('sessions.id_hash', '=', hashSecret(cookie))
        .executeTakeFirst();
      if (!session || session.expires_at <= new Date().toISOString() || tokenExpired({ expires_at: session.token_expires_at })) {
        throw new ApiError(401, 'unauthorized', 'The session has expired; log in again');
      }
      if (!SAFE_METHODS.has(c.req.method)) {
        const sent = c.req.header(CSRF_HEADER) ?? '';
        if (!sameSecret(sent, session.csrf_token)) {
          throw new ApiError(403, 'csrf', `Changes made with a session cookie need the ${CSRF_HEADER} header`);
        }
      }
      actor = toActor(session, 'session');
    }
  }
  if (!actor) throw new ApiError(401, 'unauthorized', 'Send "Authorization: Bearer <token>" or log in to the console');
  c.set('actor', actor);
  await next();
});

function toActor(row: { id: string; label: string; role: string; tenants: string }, via: Actor['via']): Actor {
  const role = row.role as Role;
  const tenants = JSON.parse(row.tenants) as string[];
  return { tokenId: row.id, label: row.label, role, tenants: role === 'admin' || role === 'auditor' ? null : tenants, via };
}

function sameSecret(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
