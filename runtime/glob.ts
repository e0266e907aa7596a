/**
 * Tool-id glob matching: `*` matches any run of characters (possibly empty), everything else
 * matches itself. Used by the compiler to expand globs; runtimes read the expanded index.
 *
 * Matching is linear (prefix, suffix, then each middle part at its leftmost place), never a
 * backtracking regular expression: a glob like `c*********Z` must not stall the server.
 */
export function globMatcher(glob: string): (id: string) => boolean {
  if (!glob.includes('*')) return (id) => id === glob;
  const parts = glob.split('*');
  const first = parts[0];
  const last = parts[parts.length - 1];
  const middle = parts.slice(1, -1).filter((p) => p !== '');
  const fixed = first.length + last.length;
  return (id) => {
    if (id.length < fixed || !id.startsWith(first) || !id.endsWith(last)) return false;
    let at = first.length;
    const end = id.length - last.length;
    for (const part of middle) {
      const found = id.indexOf(part, at);
      if (found < 0 || found + part.length > end) return false;
      at = found + part.length;
    }
    return true;
  };
}

/** True when `id` matches `glob`. */
export function globMatches(glob: string, id: string): boolean {
  return globMatcher(glob)(id);
}
