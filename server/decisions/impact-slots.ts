/**
 * How many impact analyses may run at once in this process. One analysis groups up to a week of
 * logged requests and replays them on this process's event loop (seconds on a large log, yielding
 * as it goes); any number of them at once would leave publishes and bundle pulls waiting behind
 * them, so past this many the next one is refused (429) and asked to come back.
 */
export const MAX_CONCURRENT_IMPACT_RUNS = 2;

let running = 0;

/** A slot for one analysis and the function that gives it back, or null when every slot is taken. */
export function takeImpactSlot(): (() => void) | null {
  if (running >= MAX_CONCURRENT_IMPACT_RUNS) return null;
  running++;
  let given = false;
  return () => {
    if (given) return;
    given = true;
    running--;
  };
}
