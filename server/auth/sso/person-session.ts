import type { Context } from 'hono';
import type { SsoAccess } from '../../../policy-schemas/types.gen.ts';
import type { Actor, AppDeps, AppEnv, Role } from '../../context.ts';
import type { SessionsRow } from '../../db/tables/sessions.ts';
import { ApiError } from '../../errors.ts';
import { stripStored } from '../../store/document-store.ts';
import { ssoMappingStore } from '../../store/sso-mappings.ts';
import { openSession } from '../sessions.ts';
import { accessFor, countedClaims } from './access.ts';

const DEFAULT_RECHECK_SECONDS = 30;

export type Person = { sub: string; email: string | null; name: string | null };

/**
 * The person an ID token names: `sub`, and the email (only a verified one, see countedClaims) and
 * name shown beside it in the audit trail.
 */
export function personOf(all: Record<string, unknown>): Person {
  const claims = countedClaims(all);
  const text = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v.slice(0, 320) : null);
  const name =
    text(claims.name) ?? (text(claims.given_name) && text(claims.family_name) ? `${claims.given_name} ${claims.family_name}` : text(claims.preferred_username));
  return { sub: String(claims.sub), email: text(claims.email), name };
}

/** What the current mappings give these claims. */
export async function currentAccess(deps: Pick<AppDeps, 'database'>, claims: Record<string, unknown>): Promise<SsoAccess> {
  const mappings = (await ssoMappingStore.list(deps.database.db)).map(stripStored);
  return accessFor(claims, mappings);
}

/** Starts a console session for a person the mappings let in; answers the CSRF token. */
export async function startPersonSession(c: Context<AppEnv>, claims: Record<string, unknown>, access: SsoAccess): Promise<void> {
  await openSession(c, { kind: 'person', ...personOf(claims), claims, access });
}

/**
 * The actor of a person's session. Their claims are judged against the mappings again at most
 * every `recheckSeconds`: a mapping an admin removed or narrowed takes effect within that time,
 * and a person left with no mapping is signed out.
 */
export async function personActor(
  deps: Pick<AppDeps, 'database' | 'config'>,
  row: Pick<SessionsRow, 'id_hash' | 'user_sub' | 'user_email' | 'user_name' | 'user_claims' | 'user_access' | 'access_checked_at'>,
  now = Date.now(),
): Promise<Actor> {
  let access = JSON.parse(row.user_access ?? 'null') as SsoAccess | null;
  const recheckMs = (deps.config.sso?.recheckSeconds ?? DEFAULT_RECHECK_SECONDS) * 1000;
  if (!access || !row.access_checked_at || now - Date.parse(row.access_checked_at) >= recheckMs) {
    access = await currentAccess(deps, JSON.parse(row.user_claims ?? '{}') as Record<string, unknown>);
    if (!access.access || !access.role) {
      await deps.database.db.deleteFrom('sessions').where('id_hash', '=', row.id_hash).execute();
      throw new ApiError(401, 'unauthorized', 'Your account no longer has access: the mapping that gave it was removed; sign in again or ask an admin');
    }
    await deps.database.db
      .updateTable('sessions')
      .set({ user_access: JSON.stringify(access), access_checked_at: new Date(now).toISOString() })
      .where('id_hash', '=', row.id_hash)
      .execute();
  }
  // The email is judged from the claims again, so a session opened before unverified addresses
  // were dropped does not keep writing one into the audit trail.
  const claimed = row.user_claims ? personOf(JSON.parse(row.user_claims) as Record<string, unknown>) : null;
  const person = { sub: row.user_sub ?? '', email: claimed ? claimed.email : row.user_email, name: row.user_name };
  return {
    tokenId: null,
    label: person.name ?? person.email ?? `user:${person.sub}`,
    role: access.role as Role,
    tenants: access.tenants,
    tenantRoles: access.tenantRoles as Record<string, Role>,
    person,
    via: 'session',
  };
}
