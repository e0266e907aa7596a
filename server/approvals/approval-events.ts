/**
 * In-process notice that an approval request was decided, so long polls on it answer at once.
 * Fed by the cluster events (this replica's decisions and, with PostgreSQL, every other one's).
 * One per server (AppDeps.approvalEvents): a decision on one server never wakes another's polls.
 */
export class ApprovalEvents {
  private readonly waiters = new Map<string, Set<() => void>>();

  decided(_tenant: string, id: string): void {
    const set = this.waiters.get(id);
    if (!set) return;
    this.waiters.delete(id);
    for (const wake of set) wake();
  }

  /** Resolves when request `id` is decided, after `ms`, or when `signal` aborts; whichever is first. */
  waitFor(id: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        const current = this.waiters.get(id);
        current?.delete(done);
        if (current?.size === 0) this.waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      set.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
