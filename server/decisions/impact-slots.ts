/**
 * How many impact analyses may run at once in this process. One analysis groups up to a week of
 * logged requests and replays them on this process's event loop (seconds on a large log, yielding
 * as it goes); any number of them at once would leave publishes and bundle pulls waiting behind
 * them, so past this many the next one is refused (429) and asked to come back.
 */
export const MAX_CONCURRENT_IMPACT_RUNS = 2;

/**
 * The impact-analysis slots of one server, owned by its application context (two servers in one
 * process each have their own).
 */
export class ImpactSlots {
  private running = 0;

  constructor(readonly max = MAX_CONCURRENT_IMPACT_RUNS) {}

  /** A slot for one analysis and the function that gives it back, or null when every slot is taken. */
  take(): (() => void) | null {
    if (this.running >= this.max) return null;
    this.running++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.running--;
    };
  }
}
