/**
 * Tool-id glob matching: `*` matches any run of characters (possibly empty), everything else
 * matches itself. Used by the compiler to expand globs; runtimes read the expanded index.
 */
export function globMatcher(glob: string): (id: string) => boolean {
  if (!glob.includes('*')) return (id) => id === glob;
  const re = new RegExp('^' + glob.split('*').map(escapeRegExp).join('.*') + '$', 's');
  return (id) => re.test(id);
}

/** True when `id` matches `glob`. */
export function globMatches(glob: string, id: string): boolean {
  return globMatcher(glob)(id);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
