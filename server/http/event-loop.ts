/**
 * Resolves on a later turn of the event loop, after the I/O that is waiting: a long job (an export,
 * a chain walk, an analysis) awaits it between bounded chunks of work, so every other request,
 * `/healthz` and bundle pulls above all, is answered in between. better-sqlite3 and a resolved
 * promise never give the loop a turn by themselves.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
