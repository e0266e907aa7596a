/**
 * Which replica runs the background jobs that must run once (re-issue, MCP re-sync, audit
 * checkpoints, decision retention, key-set upkeep).
 */
export interface Leadership {
  readonly leader: boolean;
  /** Calls `listener` whenever this process gains or loses leadership; returns the function that stops it. */
  onChange(listener: (leader: boolean) => void): () => void;
  close(): Promise<void>;
}

/** One process on its own database (SQLite): it leads from the start and never stops. */
export class SoleLeader implements Leadership {
  readonly leader = true;
  onChange(): () => void {
    return () => undefined;
  }
  async close(): Promise<void> {}
}

/** A process that never runs the background jobs (a CLI command sharing the database). */
export class NeverLeader implements Leadership {
  readonly leader = false;
  onChange(): () => void {
    return () => undefined;
  }
  async close(): Promise<void> {}
}

/**
 * Runs a job only while this process leads: `start` when leadership comes (at once if it is
 * already here, in the same turn, as on SQLite), the function it returned when leadership goes.
 * Returns the function that stops following leadership and stops the job.
 */
export function whileLeader(leadership: Leadership, start: () => () => Promise<void>): () => Promise<void> {
  let stop: (() => Promise<void>) | null = leadership.leader ? start() : null;
  let chain: Promise<void> = Promise.resolve();
  const off = leadership.onChange((leader) => {
    chain = chain.then(async () => {
      if (leader && !stop) stop = start();
      else if (!leader && stop) {
        const running = stop;
        stop = null;
        await running();
      }
    });
  });
  return async () => {
    off();
    await chain;
    const running = stop;
    stop = null;
    if (running) await running();
  };
}
