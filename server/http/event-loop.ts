/**
 * Resolves on a later turn of the event loop, after the I/O that is waiting: a long job (an export,
 * a chain walk, an analysis) awaits it between bounded chunks of work, so every other request,
 * `/healthz` and bundle pulls above all, is answered in between. better-sqlite3 and a resolved
 * promise never give the loop a turn by themselves.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A job's share of the event loop: `yieldIfDue()` gives the loop a turn once `sliceMs` of work ran
 * since the last one, so a loop of many small steps of uneven cost (hashing events of any size)
 * yields by time rather than by a count of steps.
 */
export class TurnBudget {
  private since = performance.now();

  constructor(private readonly sliceMs = 8) {}

  async yieldIfDue(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await nextTurn();
    this.since = performance.now();
  }
}
