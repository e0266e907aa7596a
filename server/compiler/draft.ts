import type { Bundle, TenantPolicy } from '../../policy-schemas/types.gen.ts';
import { type BundleMember, bundleMember, joinBundleMembers } from '../../runtime/bundle-format.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import type { DbOrTx } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { type DraftSnapshot, loadDraftSnapshot } from '../store/snapshot.ts';
import { snapshotFingerprint } from './snapshot-fingerprint.ts';
import { type CompileError, compileBundle } from './compile-bundle.ts';
import { compileError } from './publish.ts';

/**
 * A draft compiled once: the bundle (enveloped as version 1), the serialised members its text is
 * made of (a publish re-envelopes them, compiling nothing), and the bundle as a runtime loads it,
 * made on first use (a publish without policy tests never needs it).
 */
export type CompiledDraft = { bundle: Bundle; members: readonly BundleMember[]; readonly loaded: LoadedBundle };

const MAX_CACHED = 64;
// Compiled drafts by the hash of their snapshot: simulating the same draft again, or publishing the
// draft its policy tests just ran on, compiles nothing.
const cache = new Map<string, CompiledDraft>();

/**
 * The tenant's current draft, compiled and loaded exactly as a publish would compile it (the
 * envelope aside); `policy`, when given, stands in for the saved policy. 404 for an unknown tenant, 422 `compile_error` with every error otherwise.
 */
export async function compileDraft(db: DbOrTx, tenant: string, policy?: TenantPolicy): Promise<CompiledDraft> {
  const saved = await loadDraftSnapshot(db, tenant);
  if (!saved) throw new ApiError(404, 'not_found', `tenant ${tenant} does not exist`);
  return compileSnapshot(policy ? { ...saved, policy } : saved);
}

/** A snapshot compiled, from the cache when the same draft was compiled before; 422 `compile_error` when it does not compile. */
export function compileSnapshot(snapshot: DraftSnapshot, fingerprint = snapshotFingerprint(snapshot)): CompiledDraft {
  const r = compiledOrErrors(snapshot, fingerprint);
  if ('errors' in r) throw compileError(snapshot.tenant.id, r.errors);
  return r;
}

/** Like compileSnapshot, answering the compile errors instead of throwing them. */
export function compiledOrErrors(snapshot: DraftSnapshot, fingerprint = snapshotFingerprint(snapshot)): CompiledDraft | { errors: CompileError[] } {
  const hit = cache.get(fingerprint);
  if (hit) {
    cache.delete(fingerprint);
    cache.set(fingerprint, hit);
    return hit;
  }
  const r = compileBundle(snapshot, { version: 1, previousRevision: null, issuedAt: new Date().toISOString() });
  if (!r.ok) return { errors: r.errors };
  let loaded: LoadedBundle | undefined;
  const compiled: CompiledDraft = {
    bundle: r.bundle,
    members: r.members,
    get loaded() {
      loaded ??= loadBundle(JSON.parse(r.text) as Bundle);
      return loaded;
    },
  };
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(fingerprint, compiled);
  return compiled;
}

/**
 * The compiled content under a new envelope (version, previous revision, issue and expiry time):
 * the bundle and its exact text, the content's members reused as serialised. The revision names
 * the content only, so it stays.
 */
export function envelope(compiled: CompiledDraft, e: { version: number; previousRevision: string | null; issuedAt: string }): { bundle: Bundle; text: string } {
  const expiresAt = new Date(Date.parse(e.issuedAt) + compiled.bundle.policy.bundleTtlSeconds * 1000).toISOString();
  const fields: Record<string, unknown> = { version: e.version, previousRevision: e.previousRevision, issuedAt: e.issuedAt, expiresAt };
  const bundle: Bundle = { ...compiled.bundle, version: e.version, previousRevision: e.previousRevision, issuedAt: e.issuedAt, expiresAt };
  const text = joinBundleMembers(compiled.members.map((m) => (Object.hasOwn(fields, m.key) ? bundleMember(m.key, fields[m.key]) : m)));
  return { bundle, text };
}
