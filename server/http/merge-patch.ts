/**
 * RFC 7396 JSON merge patch: objects merge, `null` removes, anything else replaces. Only own keys
 * are read and every key is defined as an own data property, so no key (not even `__proto__`)
 * can change an object's prototype.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const base = target !== null && typeof target === 'object' && !Array.isArray(target) ? (target as Record<string, unknown>) : {};
  const out = new Map<string, unknown>(Object.entries(base));
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) out.delete(k);
    else out.set(k, mergePatch(out.get(k), v));
  }
  return Object.fromEntries(out);
}
