import { createHash, randomBytes } from 'node:crypto';
import type { Token } from '../../policy-schemas/types.gen.ts';
import { type Change, runChange } from '../audit/change.ts';
import type { AppDeps, Role } from '../context.ts';
import type { DbOrTx } from '../db/database.ts';
import type { TokensRow } from '../db/tables/tokens.ts';

/** sha-256 hex of a secret; only this is ever stored. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A new random token: `tg_` + 256 bits, base64url. */
export function newTokenSecret(): string {
  return `tg_${randomBytes(32).toString('base64url')}`;
}

export function toToken(row: TokensRow): Token {
  return {
    id: row.id,
    label: row.label,
    role: row.role as Role,
    tenants: JSON.parse(row.tenants) as string[],
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at ?? null,
    version: row.version,
  };
}

/** Whether a token row has passed its expiry at `now`. */
export function tokenExpired(row: { expires_at: string | null }, now = Date.now()): boolean {
  return row.expires_at !== null && Date.parse(row.expires_at) <= now;
}

/** Every token, oldest first. */
export async function listTokenRows(db: DbOrTx): Promise<TokensRow[]> {
  return db.selectFrom('tokens').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function getTokenRow(db: DbOrTx, id: string): Promise<TokensRow | undefined> {
  return db.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Deletes the token if it is still at `version`. */
export async function deleteTokenRow(db: DbOrTx, id: string, version: number): Promise<boolean> {
  const gone = await db.deleteFrom('tokens').where('id', '=', id).where('version', '=', version).executeTakeFirst();
  return Number(gone.numDeletedRows) === 1;
}

/**
 * A deleted tenant takes its access with it: tokens scoped to it lose it, and a token left with no
 * tenant at all is revoked (its sessions go with it), so a new tenant of the same id starts clean.
 */
export async function unscopeTokens(ch: Change, tenant: string): Promise<void> {
  for (const row of await ch.tx.selectFrom('tokens').selectAll().where('role', 'in', ['editor', 'viewer', 'runtime']).execute()) {
    const tenants = JSON.parse(row.tenants) as string[];
    if (!tenants.includes(tenant)) continue;
    const rest = tenants.filter((t) => t !== tenant);
    if (rest.length === 0) {
      await ch.tx.deleteFrom('tokens').where('id', '=', row.id).execute();
      await ch.record({ action: 'delete', entityType: 'token', entityId: row.id, before: toToken(row), after: null, reason: `tenant ${tenant} was deleted` });
    } else {
      await ch.tx
        .updateTable('tokens')
        .set({ tenants: JSON.stringify(rest), version: row.version + 1 })
        .where('id', '=', row.id)
        .execute();
      await ch.record({
        action: 'update',
        entityType: 'token',
        entityId: row.id,
        before: toToken(row),
        after: { ...toToken(row), tenants: rest, version: row.version + 1 },
        reason: `tenant ${tenant} was deleted`,
      });
    }
  }
}

export async function findTokenBySecret(db: DbOrTx, secret: string): Promise<TokensRow | undefined> {
  return db.selectFrom('tokens').selectAll().where('token_hash', '=', hashSecret(secret)).executeTakeFirst();
}

export async function insertToken(
  db: DbOrTx,
  t: { id: string; label: string; role: Role; tenants: string[]; secret: string; now: string; expiresAt?: string | null },
): Promise<TokensRow> {
  const row: TokensRow = {
    id: t.id,
    label: t.label,
    role: t.role,
    tenants: JSON.stringify(t.tenants),
    token_hash: hashSecret(t.secret),
    created_at: t.now,
    last_used_at: null,
    expires_at: t.expiresAt ?? null,
    version: 1,
  };
  await db.insertInto('tokens').values(row).execute();
  return row;
}

export const BOOTSTRAP_TOKEN_ID = 'bootstrap-admin';

/**
 * Makes sure an admin can log in: `TOOLGATE_ADMIN_TOKEN` (re)sets the bootstrap admin token;
 * without it, a token is generated only when no admin token exists, and returned to be printed
 * once. Each is a change of trust, audited as `system`: the token's creation, and a new
 * `TOOLGATE_ADMIN_TOKEN` (a rotation), which also ends every console session of the old one.
 */
export async function ensureBootstrapAdmin(deps: Pick<AppDeps, 'database' | 'metrics'>, configured: string | undefined, now: string): Promise<string | null> {
  const meta = { actor: 'system', requestId: null, reason: null };
  // Before the server starts: no cluster events to tell yet (a replica's start announces tokens-changed itself).
  return runChange({ ...deps, cluster: null }, meta, async (ch) => {
    const db = ch.tx;
    const createBootstrap = async (secret: string, reason: string) => {
      const row = await insertToken(db, { id: BOOTSTRAP_TOKEN_ID, label: 'bootstrap admin', role: 'admin', tenants: [], secret, now });
      await ch.record({ action: 'create', entityType: 'token', entityId: BOOTSTRAP_TOKEN_ID, before: null, after: toToken(row), reason });
    };
    const existing = await db.selectFrom('tokens').selectAll().where('id', '=', BOOTSTRAP_TOKEN_ID).executeTakeFirst();
    if (configured) {
      const hash = hashSecret(configured);
      if (!existing) {
        await createBootstrap(configured, 'bootstrap admin token from TOOLGATE_ADMIN_TOKEN');
      } else if (existing.token_hash !== hash) {
        await db.updateTable('tokens').set({ token_hash: hash }).where('id', '=', BOOTSTRAP_TOKEN_ID).execute();
        // Sessions signed in with the old secret must not outlive it.
        const ended = await db.deleteFrom('sessions').where('token_id', '=', BOOTSTRAP_TOKEN_ID).executeTakeFirst();
        await ch.record({
          action: 'rotate',
          entityType: 'token',
          entityId: BOOTSTRAP_TOKEN_ID,
          before: toToken(existing),
          after: toToken({ ...existing, token_hash: hash }),
          reason: `TOOLGATE_ADMIN_TOKEN changed; ${Number(ended.numDeletedRows)} console session(s) of the old token ended`,
        });
      }
      return null;
    }
    const anyAdmin = await db.selectFrom('tokens').select('id').where('role', '=', 'admin').executeTakeFirst();
    if (anyAdmin) return null;
    const secret = newTokenSecret();
    await createBootstrap(secret, 'bootstrap admin token generated at first start');
    return secret;
  });
}
