import type { LoadedBundle, RedactNode } from './load-bundle.ts';

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
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const exact = node.children.get(k);
    const kept = merge(exact ? apply(exact, v) : undefined, star ? apply(star, v) : undefined);
    if (kept !== undefined) out[k] = kept;
  }
  return out;
}

function merge(a: unknown, b: unknown): unknown {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (isPlain(a) && isPlain(b)) {
    const out: Record<string, unknown> = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = k in out ? merge(out[k], v) : v;
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return a.map((x, i) => merge(x, b[i]));
  return a;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
