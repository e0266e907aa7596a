import type { Context } from 'hono';
import type { AuditEvent } from '../../policy-schemas/types.gen.ts';
import { type AppDeps, type AppEnv, actorName } from '../context.ts';
import type { Tx } from '../db/database.ts';
import { type ActorPerson, type NewAuditEvent, appendAuditEvent } from './events.ts';

export type ChangeMeta = { actor: string; person?: ActorPerson | null; requestId: string | null; reason: string | null };

/** A transaction that writes audit events for what it changes. */
export type Change = {
  tx: Tx;
  meta: ChangeMeta;
  /** Appends one audit event (actor, request id and reason come from the change). */
  record(e: Omit<NewAuditEvent, 'actor' | 'requestId' | 'reason'> & { reason?: string | null }): Promise<AuditEvent>;
};

/**
 * Who a change tells of its audit events: the server's cluster events, or null in a process that
 * has no server to tell (seeding before it starts, a CLI command on its own).
 */
export type ChangeDeps = Pick<AppDeps, 'database' | 'metrics'> & { cluster: AppDeps['cluster'] | null };

/**
 * Runs a change in one transaction with its audit events: the entity and its history commit
 * together or not at all. Counts the events in the metrics only after the commit.
 */
export async function runChange<T>(deps: ChangeDeps, meta: ChangeMeta, fn: (ch: Change) => Promise<T>): Promise<T> {
  let written: AuditEvent[] = [];
  const result = await deps.database.change(async (tx) => {
    // A retried or rolled-back attempt must not count its events.
    written = [];
    const change: Change = {
      tx,
      meta,
      async record(e) {
        const ev = await appendAuditEvent(tx, { ...e, actor: meta.actor, person: meta.person, requestId: meta.requestId, reason: e.reason ?? meta.reason });
        written.push(ev);
        return ev;
      },
    };
    return fn(change);
  });
  for (const ev of written) deps.metrics.auditEvents.inc({ action: ev.action });
  // The leader's checkpoint rule counts appends made on every replica.
  if (written.length) deps.cluster?.announce({ type: 'audit-appended', seq: written[written.length - 1].seq });
  return result;
}

/** `runChange` for an HTTP request: actor, request id and reason come from the request. */
export function withChange<T>(c: Context<AppEnv>, reason: string | null, fn: (ch: Change) => Promise<T>): Promise<T> {
  return runChange(c.get('deps'), changeMetaOf(c, reason), fn);
}

/** Who changes what in this request, as the audit trail records it. */
export function changeMetaOf(c: Context<AppEnv>, reason: string | null): ChangeMeta {
  const actor = c.get('actor');
  return { actor: actorName(actor), person: actor?.person ?? null, requestId: c.get('requestId'), reason };
}
