import type { Tool } from '../../policy-schemas/types.gen.ts';
import { sha256Hex } from '../../runtime/sha256.ts';
import type { DraftSnapshot } from '../store/snapshot.ts';
import { toolListJson } from '../store/snapshot-text.ts';

// The hash of a frozen tool list (the inventory's cached one, store/inventory.ts), by the list: a
// draft is fingerprinted at every compile and publish, and its thousands of tools seldom change.
const toolListHashes = new WeakMap<readonly Tool[], string>();

/**
 * A hash telling two reads of a tenant's draft apart, within one process: a publish compares the
 * snapshot it compiled with the one it commits on, and compiled drafts are cached by it. Plain
 * JSON text, not canonical JSON: both reads come from the same code over the same stored
 * documents, so equal drafts give equal text, and hashing 2,000 tools' text natively costs a
 * fraction of canonicalising them. (A draft re-saved with its members in another order only
 * reads as changed: the publish compiles once more.) The tools are hashed apart from the rest,
 * and a frozen list's hash is remembered: it cannot change.
 */
export function snapshotFingerprint(snapshot: DraftSnapshot): string {
  const { tools, ...rest } = snapshot;
  return `sha256:${sha256Hex(`${JSON.stringify(rest)}\n${toolListHash(tools)}`)}`;
}

function toolListHash(tools: readonly Tool[]): string {
  let hash = toolListHashes.get(tools);
  if (hash === undefined) {
    hash = sha256Hex(toolListJson(tools));
    if (Array.isArray(tools) && Object.isFrozen(tools)) toolListHashes.set(tools, hash);
  }
  return hash;
}
