import type { Bundle, TenantPolicy } from '../../policy-schemas/types.gen.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import type { DbOrTx } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { loadDraftSnapshot } from '../store/snapshot.ts';
import { snapshotFingerprint } from './snapshot-fingerprint.ts';
import { compileBundle } from './compile-bundle.ts';
import { compileError } from './publish.ts';

export type CompiledDraft = { bundle: Bundle; loaded: LoadedBundle };

const MAX_CACHED = 64;
// Compiled drafts by the hash of their snapshot: simulating the same draft again compiles nothing.
const cache = new Map<string, CompiledDraft>();

/**
 * The tenant's current draft, compiled and loaded exactly as a publish would compile it (the
 * envelope aside); `policy`, when given, stands in for the saved policy. 404 for an unknown tenant, 422 `compile_error` with every error otherwise.
 */
export async function compileDraft(db: DbOrTx, tenant: string, policy?: TenantPolicy): Promise<CompiledDraft> {
  const saved = await loadDraftSnapshot(db, tenant);
  if (!saved) throw new ApiError(404, 'not_found', `tenant ${tenant} does not exist`);
  const snapshot = policy ? { ...saved, policy } : saved;
  const key = snapshotFingerprint(snapshot);
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const r = compileBundle(snapshot, { version: 1, previousRevision: null, issuedAt: new Date().toISOString() });
  if (!r.ok) throw compileError(tenant, r.errors);
  const compiled = { bundle: r.bundle, loaded: loadBundle(JSON.parse(r.text) as Bundle) };
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(key, compiled);
  return compiled;
}
