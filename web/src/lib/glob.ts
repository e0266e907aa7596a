import { globMatcher } from '../../../runtime/glob.ts';

/** The ids among `ids` matched by a policy glob, with the compiler's own matcher. */
export function matchingIds(glob: string, ids: readonly string[]): string[] {
  const matches = globMatcher(glob);
  return ids.filter(matches);
}
