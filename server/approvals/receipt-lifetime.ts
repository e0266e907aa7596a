import { approvalSettings } from '../../runtime/approval-policy.ts';
import type { DbOrTx } from '../db/database.ts';
import { latestBundleRow } from '../store/bundles.ts';

/**
 * How long a receipt for this subject holds, in seconds: the shortest `approvals.validForSeconds`
 * among the subject's roles in the tenant's latest published bundle, the policy runtimes enforce.
 * The draft is not it: an edit not yet published (or never to be) must not lengthen a receipt.
 * With no bundle published, or the subject bound to no role there, the default (900 s).
 */
export async function publishedReceiptLifetime(db: DbOrTx, tenant: string, subject: string): Promise<number> {
  const row = await latestBundleRow(db, tenant);
  const policy = row ? (JSON.parse(row.content) as { policy?: { roles?: Record<string, object>; bindings?: Record<string, string[]> } }).policy : undefined;
  // The subject is the runtime's text: only the bundle's own bindings count, never an inherited member (constructor, __proto__).
  const roles = policy?.bindings && Object.hasOwn(policy.bindings, subject) ? policy.bindings[subject] : [];
  return approvalSettings(policy, roles).validForSeconds;
}
