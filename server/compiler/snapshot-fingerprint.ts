import { sha256Hex } from '../../runtime/sha256.ts';
import type { DraftSnapshot } from '../store/snapshot.ts';

/**
 * A hash telling two reads of a tenant's draft apart, within one process: a publish compares the
 * snapshot it compiled with the one it commits on, and compiled drafts are cached by it. Plain
 * JSON text, not canonical JSON: both reads come from the same code over the same stored
 * documents, so equal drafts give equal text, and hashing 2,000 tools' text natively costs a
 * fraction of canonicalising them. (A draft re-saved with its members in another order only
 * reads as changed: the publish compiles once more.)
 */
export function snapshotFingerprint(snapshot: DraftSnapshot): string {
  return `sha256:${sha256Hex(JSON.stringify(snapshot))}`;
}
