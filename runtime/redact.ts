import type { LoadedBundle, RedactNode } from './load-bundle.ts';
import { setOwnMember } from './own-member.ts';

/**
 * Keeps only the output fields a tool's redaction allowlist names (for UI and telemetry);
 * everything else is stripped. A tool without an allowlist, or unknown, keeps nothing.
 *
 * @example
 *   redact(loaded, 'core__search', { hits: [{ title: 'a', body: 'secret' }] }) // allow ["hits[].title"] → { hits: [{ title: 'a' }] }
 */
export function redact(loaded: LoadedBundle, toolId: string, output: unknown): unknown {
  const trie = loaded.byId.get(toolId)?.redaction;
  if (!trie) return undefined;
  return apply(trie, output);
}

function apply(node: RedactNode, value: unknown): unknown {
  if (node.leaf) return value;
  if (Array.isArray(value)) {
    const each = node.children.get('[]');
    if (!each) return undefined;
    const out: unknown[] = [];
    for (const v of value) {
      const r = apply(each, v);
      if (r !== undefined) out.push(r);
    }
    return out;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  const star = node.children.get('*');
  for (const k of Object.keys(value)) {
    const exact = k === '*' ? undefined : node.children.get(k);
    const next = exact && star ? mergedWithStar(exact, star) : (exact ?? star);
    if (next === undefined) continue;
    const kept = apply(next, (value as Record<string, unknown>)[k]);
    if (kept === undefined) continue;
    // Member names are data (R1.1): assigning `__proto__` would set the prototype instead.
    setOwnMember(out, k, kept);
  }
  return out;
}

// A member both its own name and `*` continue with is walked by the union of the two subtries
// (R10.3), never by merging two walks' results: a node either path keeps whole stays whole.
// A node can meet different `*` siblings (a union reuses the nodes of both subtries), so each union
// is kept by the pair: keyed by the exact node alone, one walk's union would serve another and keep
// what that walk's allowlist does not name.
const unions = new WeakMap<RedactNode, WeakMap<RedactNode, RedactNode>>();

function mergedWithStar(exact: RedactNode, star: RedactNode): RedactNode {
  let byStar = unions.get(exact);
  if (byStar === undefined) unions.set(exact, (byStar = new WeakMap()));
  let merged = byStar.get(star);
  if (merged === undefined) byStar.set(star, (merged = union(exact, star)));
  return merged;
}

function union(a: RedactNode, b: RedactNode): RedactNode {
  if (a.leaf) return a;
  if (b.leaf) return b;
  const children = new Map(a.children);
  for (const [segment, child] of b.children) {
    const mine = children.get(segment);
    children.set(segment, mine ? union(mine, child) : child);
  }
  return { leaf: false, children };
}
