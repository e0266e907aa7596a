import { getCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import type { Actor, AppConfig, AppEnv, Role } from '../context.ts';
import type { ToolgateDatabase } from '../db/database.ts';
import type { TokensRow } from '../db/tables/tokens.ts';
import { ApiError } from '../errors.ts';
import { recordFailure, refuseWhenLimited } from './failure-limiter.ts';
import { personActor } from './sso/person-session.ts';
import { hashSecret, tokenExpired } from './tokens.ts';

export const SESSION_COOKIE = 'toolgate_session';
export const CSRF_HEADER = 'X-CSRF-Token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Resolves the actor from `Authorization: Bearer` or the console's session cookie. Cookie-borne
 * changes must carry the session's CSRF token; bearer tokens cannot be sent by a browser on its own.
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const { database, config, tokens } = c.get('deps');
  const auth = c.req.header('authorization');
  let actor: Actor | null = null;
  if (auth !== undefined) {
    refuseWhenLimited(c);
    const hash = bearerHash(auth);
    const checked = hash === undefined ? MALFORMED : bearerActor(await tokens.find(hash));
    if (!checked.ok) {
      // Guesses (a malformed or unknown token) use up the address's allowance; an expired token was real.
      if (checked.refusal !== 'expired') recordFailure(c);
      throw new ApiError(401, 'unauthorized', BEARER_REFUSALS[checked.refusal]);
    }
    actor = checked.actor;
  } else {
    const cookie = getCookie(c, SESSION_COOKIE);
    if (cookie) {
      // A session belongs to a token (token_id) or to a person signed in through single sign-on.
      const session = await findSession(database, cookie);
      const now = Date.now();
      // A session ends with its token's expiry too; a person's session has no token but a user.
      if (
        !session ||
        !sessionLive(session, config, now) ||
        (session.id === null && session.user_sub === null) ||
        tokenExpired({ expires_at: session.token_expires_at }, now)
      ) {
        if (session) await database.db.deleteFrom('sessions').where('id_hash', '=', session.id_hash).execute();
        throw new ApiError(
          401,
          'unauthorized',
          'The session has ended (signed out, idle too long, too old, its token was changed, revoked or expired, or its access was removed); log in again',
        );
      }
      await touchSession(c, session, now);
      if (!SAFE_METHODS.has(c.req.method)) {
        const sent = c.req.header(CSRF_HEADER) ?? '';
        if (!sameSecret(sent, session.csrf_token)) {
          throw new ApiError(403, 'csrf', `Changes made with a session cookie need the ${CSRF_HEADER} header`);
        }
      }
      actor =
        session.id !== null && session.label !== null && session.role !== null && session.tenants !== null
          ? toActor({ id: session.id, label: session.label, role: session.role, tenants: session.tenants }, 'session')
          : await personActor({ database, config }, session);
    }
  }
  if (!actor) throw new ApiError(401, 'unauthorized', 'Send "Authorization: Bearer <token>" or log in to the console');
  c.set('actor', actor);
  await next();
  // Whatever a handler set, an answer that needed a token is for that token's holder alone.
  const cache = c.res.headers.get('cache-control');
  if (cache && /\bpublic\b/i.test(cache)) c.res.headers.set('Cache-Control', cache.replace(/\bpublic\b/gi, 'private'));
});

/**
 * The session a console cookie names, with its token (a token's session) or its person (a single
 * sign-on session): what both authenticate and the re-check of a held request judge it by.
 * Undefined when no session has that cookie.
 */
export function findSession(database: ToolgateDatabase, cookie: string) {
  return database.db
    .selectFrom('sessions')
    .leftJoin('tokens', 'tokens.id', 'sessions.token_id')
    .select([
      'tokens.id',
      'tokens.label',
      'tokens.role',
      'tokens.tenants',
      'sessions.id_hash',
      'sessions.token_id',
      'sessions.csrf_token',
      'sessions.created_at',
      'sessions.expires_at',
      'tokens.expires_at as token_expires_at',
    ])
    .select(['sessions.user_sub', 'sessions.user_email', 'sessions.user_name', 'sessions.user_claims', 'sessions.user_access', 'sessions.access_checked_at'])
    .where('sessions.id_hash', '=', hashSecret(cookie))
    .executeTakeFirst();
}

/** Why a bearer credential is refused, as the 401 says it. */
const BEARER_REFUSALS = {
  malformed: 'Authorization must be "Bearer <token>"',
  unknown: 'The token is unknown or was revoked',
  expired: 'The token has expired',
} as const;

/** What a bearer credential comes to: its holder, or why it is refused. */
export type BearerCheck = { ok: true; actor: Actor } | { ok: false; refusal: keyof typeof BEARER_REFUSALS };

const MALFORMED: BearerCheck = { ok: false, refusal: 'malformed' };
const UNKNOWN: BearerCheck = { ok: false, refusal: 'unknown' };
const EXPIRED: BearerCheck = { ok: false, refusal: 'expired' };

/**
 * The lookup key of an `Authorization: Bearer <token>` header (the token's hash, as stored);
 * undefined for any other form. With bearerActor, the one reading of a bearer credential: both
 * authenticate and the listener's conditional-pull shortcut go through these two, and only the
 * lookup between them differs (the app may wait for the database, the shortcut takes only a
 * cached row).
 */
export function bearerHash(header: string): string | undefined {
  const token = BEARER.exec(header)?.[1];
  return token === undefined ? undefined : hashSecret(token);
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The holder of the token row a bearerHash found (undefined when none was found), unless the token
 * has expired. The actor is made once per row: a cached row answers many requests.
 */
export function bearerActor(row: TokensRow | undefined, now = Date.now()): BearerCheck {
  if (!row) return UNKNOWN;
  if (tokenExpired(row, now)) return EXPIRED;
  let checked = bearerChecks.get(row);
  if (!checked) {
    // Shared by every request with this token: frozen, its tenant list too.
    const actor = toActor(row, 'bearer');
    if (actor.tenants) Object.freeze(actor.tenants);
    checked = { ok: true, actor: Object.freeze(actor) };
    bearerChecks.set(row, checked);
  }
  return checked;
}

// A pure memo, so it may live in the module: the actor depends only on the row's id, label, role and
// tenants, which a row object never changes (a token changed in the database is a new row, read by a
// new lookup; only last_used_at is written on the object, and the actor ignores it). Keyed weakly by
// row objects a server's own token cache read, it holds nothing another server could reach, and
// nothing past the row's life in that cache.
const bearerChecks = new WeakMap<TokensRow, BearerCheck>();

/**
 * A session lives while unused for less than the idle time (`expires_at`, pushed forward as it
 * is used) and younger than the absolute lifetime (from `created_at`, under the current config).
 */
export function sessionLive(s: { created_at: string; expires_at: string }, config: AppConfig, now: number): boolean {
  return Date.parse(s.expires_at) > now && Date.parse(s.created_at) + config.sessionTtlSeconds * 1000 > now;
}

// The idle deadline moves at most once a minute, so reads do not each become a write.
const TOUCH_EVERY_MS = 60_000;

async function touchSession(c: Context<AppEnv>, s: { id_hash: string; created_at: string; expires_at: string }, now: number): Promise<void> {
  const { database, config } = c.get('deps');
  const next = sessionDeadline(config, Date.parse(s.created_at), now);
  if (Math.abs(next - Date.parse(s.expires_at)) < TOUCH_EVERY_MS) return;
  await database.db
    .updateTable('sessions')
    .set({ expires_at: new Date(next).toISOString() })
    .where('id_hash', '=', s.id_hash)
    .execute();
}

/** When a session used at `now` ends if not used again: the idle time on, capped by the absolute lifetime. */
export function sessionDeadline(config: AppConfig, createdAt: number, now: number): number {
  return Math.min(now + (config.sessionIdleSeconds ?? DEFAULT_IDLE_SECONDS) * 1000, createdAt + config.sessionTtlSeconds * 1000);
}

const DEFAULT_IDLE_SECONDS = 30 * 60;

/** The actor a token row stands for. */
export function toActor(row: { id: string; label: string; role: string; tenants: string }, via: Actor['via']): Actor {
  const role = row.role as Role;
  const tenants = JSON.parse(row.tenants) as string[];
  return { tokenId: row.id, label: row.label, role, tenants: role === 'admin' || role === 'auditor' ? null : tenants, via };
}

function sameSecret(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
