import type { AuditEvent } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import type { DbOrTx, Tx } from '../db/database.ts';
import type { AuditEventsRow } from '../db/tables/audit-events.ts';
import { nextTurn } from '../http/event-loop.ts';
import { ChainVerifier, GENESIS_HASH, eventHash } from './chain.ts';

/** A signed-in person's email and name, recorded beside their `user:<sub>` actor. */
export type ActorPerson = { email: string | null; name: string | null };

export type NewAuditEvent = Pick<AuditEvent, 'actor' | 'action' | 'entityType' | 'entityId'> & {
  /** The person behind a `user:` actor; absent for tokens and the system. */
  person?: ActorPerson | null;
  tenant?: string | null;
  before?: unknown;
  after?: unknown;
  reason?: string | null;
  requestId?: string | null;
};

/**
 * Appends one event inside the caller's transaction, linked to the last one. SQLite runs one
 * writer at a time, so reading the tail and inserting cannot interleave with another append.
 */
export async function appendAuditEvent(tx: Tx, e: NewAuditEvent, at = new Date().toISOString()): Promise<AuditEvent> {
  const last = await tx.selectFrom('audit_events').select(['seq', 'hash']).orderBy('seq', 'desc').limit(1).executeTakeFirst();
  const partial: Omit<AuditEvent, 'hash'> = {
    seq: (last?.seq ?? 0) + 1,
    at,
    actor: e.actor,
    // Only a person's events carry these fields: every other event hashes exactly as before.
    ...(isPerson(e.actor) ? { actorEmail: e.person?.email ?? null, actorName: e.person?.name ?? null } : {}),
    action: e.action,
    entityType: e.entityType,
    entityId: e.entityId,
    tenant: e.tenant ?? null,
    before: (e.before ?? null) as AuditEvent['before'],
    after: (e.after ?? null) as AuditEvent['after'],
    reason: e.reason ? e.reason : null,
    requestId: e.requestId ?? null,
    prevHash: last?.hash ?? GENESIS_HASH,
  };
  const event: AuditEvent = { ...partial, hash: eventHash(partial) };
  await tx.insertInto('audit_events').values(toRow(event)).execute();
  return event;
}

/** The seq of the newest audit event (0 before the first): any change since shows as a higher one. */
export async function lastAuditSeq(db: DbOrTx): Promise<number> {
  const row = await db
    .selectFrom('audit_events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/** Events of a person (`user:<sub>`) carry `actorEmail` and `actorName`, and no others do. */
export function isPerson(actor: string): boolean {
  return actor.startsWith('user:');
}

function toRow(e: AuditEvent): AuditEventsRow {
  return {
    seq: e.seq,
    at: e.at,
    actor: e.actor,
    actor_email: e.actorEmail ?? null,
    actor_name: e.actorName ?? null,
    action: e.action,
    entity_type: e.entityType,
    entity_id: e.entityId,
    tenant: e.tenant,
    before: e.before === null ? null : canonicalJson(e.before),
    after: e.after === null ? null : canonicalJson(e.after),
    reason: e.reason,
    request_id: e.requestId,
    prev_hash: e.prevHash,
    hash: e.hash,
  };
}

export function fromRow(r: AuditEventsRow): AuditEvent {
  return {
    seq: r.seq,
    at: r.at,
    actor: r.actor,
    ...(isPerson(r.actor) ? { actorEmail: r.actor_email, actorName: r.actor_name } : {}),
    action: r.action as AuditEvent['action'],
    entityType: r.entity_type as AuditEvent['entityType'],
    entityId: r.entity_id,
    tenant: r.tenant,
    before: r.before === null ? null : JSON.parse(r.before),
    after: r.after === null ? null : JSON.parse(r.after),
    reason: r.reason,
    requestId: r.request_id,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

export type AuditFilter = {
  tenant?: string;
  /** Restrict to these tenants (tenant-scoped readers); null = all. */
  tenants?: string[] | null;
  actor?: string;
  entityType?: string;
  entityId?: string;
  action?: string;
  from?: string;
  to?: string;
};

/**
 * One page of events (keyset pagination: constant cost per page). Oldest first after `cursor`, or
 * with `desc` newest first before `cursor` (0 = from the newest).
 */
export async function listAuditEvents(
  db: DbOrTx,
  f: AuditFilter,
  cursor: number,
  limit: number,
  order: 'asc' | 'desc' = 'asc',
  /** Only events up to this seq: a walk's bound on how far one query looks. */
  upToSeq?: number,
): Promise<AuditEvent[]> {
  let q = db.selectFrom('audit_events').selectAll();
  if (order === 'asc') q = q.where('seq', '>', cursor);
  else if (cursor > 0) q = q.where('seq', '<', cursor);
  if (f.tenant !== undefined) q = q.where('tenant', '=', f.tenant);
  if (f.tenants) q = f.tenants.length ? q.where('tenant', 'in', f.tenants) : q.where('tenant', '=', '\u0000none');
  // A person is found by `user:<sub>` or by their email, whichever the auditor has.
  if (f.actor !== undefined) {
    const who = f.actor;
    q = who.includes('@') ? q.where((w) => w.or([w('actor', '=', who), w('actor_email', '=', who)])) : q.where('actor', '=', who);
  }
  if (f.entityType !== undefined) q = q.where('entity_type', '=', f.entityType);
  if (f.entityId !== undefined) q = q.where('entity_id', '=', f.entityId);
  if (f.action !== undefined) q = q.where('action', '=', f.action);
  if (f.from !== undefined) q = q.where('at', '>=', f.from);
  if (f.to !== undefined) q = q.where('at', '<', f.to);
  if (upToSeq !== undefined) q = q.where('seq', '<=', upToSeq);
  const rows = await q.orderBy('seq', order).limit(limit).execute();
  return rows.map(fromRow);
}

/** Events one export or chain walk reads per query, before the event loop gets a turn. */
export const AUDIT_PAGE = 250;
/**
 * The widest seq range one query looks through: a filter matching few events cannot make a single
 * query scan the whole history (better-sqlite3 holds the event loop for as long as a query runs).
 */
export const AUDIT_SCAN_WINDOW = 20_000;

/**
 * Every event matching `f`, oldest first, one page at a time, up to the head as it was when the
 * walk began: memory stays flat, the database is never held between pages, and the event loop gets
 * a turn after each page, so other requests are answered while a million events stream out.
 */
export async function* auditEventPages(db: DbOrTx, f: AuditFilter = {}, pageSize = AUDIT_PAGE): AsyncGenerator<AuditEvent[]> {
  const head = await lastAuditSeq(db);
  let after = 0;
  while (after < head) {
    const windowEnd = Math.min(head, after + AUDIT_SCAN_WINDOW);
    const page = await listAuditEvents(db, f, after, pageSize, 'asc', windowEnd);
    if (page.length > 0) yield page;
    // A full page goes on from its last event; a short one has read its window to the end.
    after = page.length === pageSize ? page[page.length - 1].seq : windowEnd;
    await nextTurn();
  }
}

/** Walks the stored chain from seq 1 (constant memory) up to the first broken link. */
export async function verifyStoredChain(db: DbOrTx): Promise<ChainVerifier> {
  const verifier = new ChainVerifier();
  for await (const page of auditEventPages(db)) {
    for (const e of page) if (!verifier.push(e)) return verifier;
  }
  return verifier;
}
