/** RFC 6901 escaping of one reference token. Pure, so the console can use it too. */
export function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
