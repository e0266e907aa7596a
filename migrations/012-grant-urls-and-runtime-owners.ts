import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { canonicalJson } from '../runtime/canonical-json.ts';

// Two promises of the same round, kept by the database:
//
// 1. Every grant has a URL. Grant ids were once allowed to be `.` or `..` (every URL naming them
//    normalizes the segment away, so no one could read, edit or delete such a grant) and up to 200
//    characters; now they are 1-128 of [A-Za-z0-9._:@-], never `.` or `..`. Each stored grant whose
//    id breaks that rule is renamed here to `renamed-<16 hex of the old id's sha-256>`, keeping
//    what it grants, and the rename is audited (delete of the old id, create of the new one,
//    actor `system`), so an admin sees it in the history and can then edit or delete the grant.
//    Renaming rather than deleting: a grant is an admin's decision, and removing one silently
//    would change who may use a connection without anyone having chosen it.
//
// 2. A runtime reports only as itself: `runtime_owners` ties each runtime id of a tenant to the
//    token that first reported under it.
//
// The audit rows are written with the chain's rule as it stands at this migration (hash =
// sha256(prevHash ‖ canonical event without hash)), without importing the application.

const GRANT_ID = /^(?:[A-Za-z0-9_:@-][A-Za-z0-9._:@-]*|\.[A-Za-z0-9_:@-][A-Za-z0-9._:@-]*|\.\.[A-Za-z0-9._:@-]+)$/;
const REASON = 'migration 012: this grant id could not be named in a URL (`.`, `..` or over 128 characters), so it was renamed';

/** Whether a stored connection id can be named in a URL under the current rules. */
export function grantIdHasUrl(id: string): boolean {
  return id.length >= 1 && id.length <= 128 && GRANT_ID.test(id);
}

/** The id a grant without a URL is renamed to (deterministic; `-2`, `-3` … when taken). */
export function renamedGrantId(old: string, taken: ReadonlySet<string>): string {
  const base = `renamed-${createHash('sha256').update(old, 'utf8').digest('hex').slice(0, 16)}`;
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
  return id;
}

type GrantRow = { tenant: string; connection_id: string; body: string; version: number; created_at: string; updated_at: string };
type AuditTail = { seq: number; hash: string };

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('runtime_owners')
    .addColumn('tenant', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('runtime_id', 'text', (c) => c.notNull())
    .addColumn('token_id', 'text', (c) => c.notNull())
    .addColumn('claimed_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('runtime_owners_pk', ['tenant', 'runtime_id'])
    .execute();
  await renameGrantsWithoutUrl(db);
}

/** Renames every stored grant whose id no URL can name, auditing each rename; returns how many. */
export async function renameGrantsWithoutUrl(db: Kysely<unknown>): Promise<number> {
  const grants = (
    await sql<GrantRow>`SELECT tenant, connection_id, body, version, created_at, updated_at FROM grants ORDER BY tenant, connection_id`.execute(db)
  ).rows;
  const broken = grants.filter((g) => !grantIdHasUrl(g.connection_id));
  if (broken.length === 0) return 0;
  const now = new Date().toISOString();
  let tail = (await sql<AuditTail>`SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1`.execute(db)).rows[0];
  for (const g of broken) {
    const taken = new Set(grants.filter((o) => o.tenant === g.tenant).map((o) => o.connection_id));
    const id = renamedGrantId(g.connection_id, taken);
    grants.push({ ...g, connection_id: id });
    const before = JSON.parse(g.body) as Record<string, unknown>;
    const after = { ...before, connectionId: id };
    await sql`UPDATE grants SET connection_id = ${id}, body = ${JSON.stringify(after)}, version = ${g.version + 1}, updated_at = ${now}
      WHERE tenant = ${g.tenant} AND connection_id = ${g.connection_id}`.execute(db);
    tail = await appendEvent(db, tail, { at: now, action: 'delete', entityId: g.connection_id, tenant: g.tenant, before, after: null });
    tail = await appendEvent(db, tail, { at: now, action: 'create', entityId: id, tenant: g.tenant, before: null, after });
  }
  return broken.length;
}

async function appendEvent(
  db: Kysely<unknown>,
  tail: AuditTail | undefined,
  e: { at: string; action: 'create' | 'delete'; entityId: string; tenant: string; before: unknown; after: unknown },
): Promise<AuditTail> {
  const event = {
    seq: (tail?.seq ?? 0) + 1,
    at: e.at,
    actor: 'system',
    action: e.action,
    entityType: 'grant',
    entityId: e.entityId,
    tenant: e.tenant,
    before: e.before,
    after: e.after,
    reason: REASON,
    requestId: null,
    prevHash: tail?.hash ?? '0'.repeat(64),
  };
  const hash = createHash('sha256')
    .update(event.prevHash + canonicalJson(event), 'utf8')
    .digest('hex');
  await sql`INSERT INTO audit_events (seq, at, actor, action, entity_type, entity_id, tenant, before, after, reason, request_id, prev_hash, hash)
    VALUES (${event.seq}, ${event.at}, ${event.actor}, ${event.action}, ${event.entityType}, ${event.entityId}, ${event.tenant},
      ${e.before === null ? null : canonicalJson(e.before)}, ${e.after === null ? null : canonicalJson(e.after)}, ${REASON}, ${null},
      ${event.prevHash}, ${hash})`.execute(db);
  return { seq: event.seq, hash };
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Renamed grants keep their new ids: the old ones had no URL, and the audit log records both.
  await db.schema.dropTable('runtime_owners').execute();
}
