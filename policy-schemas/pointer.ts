// JSON pointers (RFC 6901), for the server, the SDK and the console alike: pure, no `node:` modules.

/** RFC 6901 escaping of one reference token. */
export function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The reference token an escaped one stands for (`~1` before `~0`, as RFC 6901 orders it). */
export function unescapePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}
