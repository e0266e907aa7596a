/** Whether a tool id matches a policy glob (`*` matches any run of characters), as the compiler reads it. */
export function globMatches(glob: string, id: string): boolean {
  if (!glob.includes('*')) return glob === id;
  const re = new RegExp(`^${glob.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\-]/g, '\\$&')).join('.*')}$`);
  return re.test(id);
}

/** The ids among `ids` matched by `glob`. */
export function matchingIds(glob: string, ids: readonly string[]): string[] {
  return ids.filter((id) => globMatches(glob, id));
}
