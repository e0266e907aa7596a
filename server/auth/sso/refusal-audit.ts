import { createHash } from 'node:crypto';
import type { Tx } from '../../db/database.ts';

/** A refused sign-in of a subject is written to the audit trail at most once in this window. */
export const REFUSAL_AUDIT_WINDOW_MS = 60_000;

const subjectHash = (sub: string) => createHash('sha256').update(sub, 'utf8').digest('hex');

/**
 * Claims the right to audit a refused sign-in of `sub` now: true when none was audited in the
 * last minute. One conditional upsert decides it, so of two replicas refusing the same person at
 * once only one writes the event. Rows of subjects quiet for a minute are forgotten on the way.
 */
export async function claimRefusalAudit(tx: Tx, sub: string, now = new Date()): Promise<boolean> {
  const cutoff = new Date(now.getTime() - REFUSAL_AUDIT_WINDOW_MS).toISOString();
  await tx.deleteFrom('sso_refusals').where('audited_at', '<=', cutoff).execute();
  const claimed = await tx
    .insertInto('sso_refusals')
    .values({ subject_hash: subjectHash(sub), audited_at: now.toISOString() })
    .onConflict((oc) => oc.column('subject_hash').doUpdateSet({ audited_at: now.toISOString() }).where('sso_refusals.audited_at', '<=', cutoff))
    .returning('subject_hash')
    .executeTakeFirst();
  return claimed !== undefined;
}
