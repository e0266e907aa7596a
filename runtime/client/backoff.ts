/** Exponential backoff with jitter: each failure doubles the ceiling, each wait is drawn from its upper half. */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly initialMs = 250,
    private readonly maxMs = 30_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** The wait before the next attempt after one more failure. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.round(ceiling / 2 + this.random() * (ceiling / 2));
  }

  reset(): void {
    this.failures = 0;
  }
}
