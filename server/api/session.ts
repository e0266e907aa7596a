import { Hono } from 'hono';
import { deleteCookie, getCookie } from 'hono/cookie';
import { SESSION_COOKIE, authenticate, toActor } from '../auth/authenticate.ts';
import { recordFailure, refuseWhenLimited } from '../auth/failure-limiter.ts';
import { actorOf } from '../auth/guard.ts';
import { sessionPermissions } from '../auth/permissions.ts';
import { endSession, openSession, pruneSessions, sessionCsrfToken } from '../auth/sessions.ts';
import { endSessionUrl } from '../auth/sso/oidc-client.ts';
import { findTokenBySecret, toToken, tokenExpired } from '../auth/tokens.ts';
import { type AppEnv, actorName } from '../context.ts';
import { ApiError } from '../errors.ts';
import type { SessionCreate } from '../../policy-schemas/types.gen.ts';
import { readValid } from '../http/body.ts';
import { approvalsNeedPerson } from './approvals.ts';

/**
 * `/v1/session`: the console logs in with a token and gets an HttpOnly, SameSite=Strict cookie;
 * changes made with it must echo the CSRF token returned here.
 */
export const sessionRoutes = new Hono<AppEnv>();

sessionRoutes.post('/', async (c) => {
  refuseWhenLimited(c);
  const { token } = await readValid<SessionCreate>(c, 'session-create');
  const row = await findTokenBySecret(c.get('deps').database.db, token);
  if (!row) {
    recordFailure(c);
    throw new ApiError(401, 'unauthorized', 'The token is unknown or was revoked');
  }
  if (tokenExpired(row)) throw new ApiError(401, 'unauthorized', 'The token has expired');
  if (row.role === 'runtime') throw new ApiError(403, 'forbidden', 'Runtime tokens pull bundles; they cannot log in to the console');
  const { csrfToken } = await openSession(c, { kind: 'token', tokenId: row.id });
  await pruneSessions(c.get('deps').database.db, new Date());
  const t = toToken(row);
  const actor = toActor(row, 'session');
  const { authorizer, config } = c.get('deps');
  return c.json({
    tokenId: t.id,
    label: t.label,
    actor: actorName(actor),
    role: t.role,
    tenants: t.tenants,
    csrfToken,
    permissions: sessionPermissions(authorizer, actor),
    approvalsNeedPerson: approvalsNeedPerson(config, actor),
  });
});

sessionRoutes.get('/', authenticate, async (c) => {
  const actor = actorOf(c);
  const cookie = getCookie(c, SESSION_COOKIE);
  const csrfToken = cookie ? await sessionCsrfToken(c.get('deps').database.db, cookie) : undefined;
  const person = actor.person
    ? { user: { id: `user:${actor.person.sub}`, email: actor.person.email, name: actor.person.name }, tenantRoles: actor.tenantRoles ?? {} }
    : {};
  return c.json({
    tokenId: actor.tokenId,
    label: actor.label,
    actor: actorName(actor),
    role: actor.role,
    tenants: actor.tenants ?? [],
    csrfToken: csrfToken ?? null,
    ...person,
    permissions: sessionPermissions(c.get('deps').authorizer, actor),
    approvalsNeedPerson: approvalsNeedPerson(c.get('deps').config, actor),
  });
});

sessionRoutes.delete('/', authenticate, async (c) => {
  const cookie = getCookie(c, SESSION_COOKIE);
  if (cookie) await endSession(c.get('deps').database.db, cookie);
  deleteCookie(c, SESSION_COOKIE, { path: '/' });
  // A person signed out here is sent on to sign out at their identity provider too, when it can.
  const sso = c.get('deps').config.sso;
  const providerUrl = actorOf(c).person && sso ? await endSessionUrl(sso) : null;
  if (providerUrl) return c.json({ endSessionUrl: providerUrl });
  return c.body(null, 204);
});
