import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type Metrics = {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  auditEvents: Counter<'action'>;
  /** Decision records stored (optional so hand-built deps in tests need not carry it). */
  decisionsIngested?: Counter;
  /**
   * Conditional bundle pulls the listener answered 304 itself (server/distribution/conditional-pull.ts),
   * also counted in `httpRequests`: how much of the pull traffic never reached the app.
   */
  listenerPullAnswers: Counter;
  /**
   * Requests on which that shortcut threw (each then answered by the app): a fault that recurs
   * turns the shortcut off without failing a request, so it is counted, not only logged once.
   */
  listenerPullFaults: Counter;
  /** A tally of requests with fixed labels for a hot path (see RequestTally). */
  requestTally(labels: { method: string; route: string; status: string }): RequestTally;
};

/**
 * Requests of one method, route and status, counted and timed for `httpRequests` and
 * `httpDuration` without prom-client's label checks and hashing on each request: the durations
 * are kept as they come and handed to the two metrics in one pass before anything reads them
 * (and at least once a second), so every read shows them as if each had been observed at once.
 */
export type RequestTally = { add(seconds: number): void };

const TALLY_FLUSH_MS = 1000;

/** One registry per server (not the global one), so servers in tests do not share counters. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'toolgate_' });
  const tallies: Tally[] = [];
  const flushTallies = () => {
    for (const t of tallies) t.flush();
  };
  const httpRequests = new Counter({
    name: 'toolgate_http_requests_total',
    help: 'HTTP requests by route pattern and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
    collect: flushTallies,
  });
  const httpDuration = new Histogram({
    name: 'toolgate_http_request_duration_seconds',
    help: 'HTTP request latency by route pattern',
    labelNames: ['method', 'route'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60],
    registers: [registry],
    collect: flushTallies,
  });
  return {
    registry,
    httpRequests,
    httpDuration,
    requestTally(labels) {
      const tally = new Tally(httpRequests, httpDuration, labels);
      tallies.push(tally);
      return tally;
    },
    auditEvents: new Counter({
      name: 'toolgate_audit_events_written_total',
      help: 'Audit events committed, by action',
      labelNames: ['action'],
      registers: [registry],
    }),
    listenerPullAnswers: new Counter({
      name: 'toolgate_listener_pull_answers_total',
      help: 'Conditional bundle pulls answered 304 by the listener without going through the app (also in toolgate_http_requests_total)',
      registers: [registry],
    }),
    listenerPullFaults: new Counter({
      name: 'toolgate_listener_pull_faults_total',
      help: "Requests on which the listener's conditional-pull shortcut failed and left the answer to the app",
      registers: [registry],
    }),
    decisionsIngested: new Counter({
      name: 'toolgate_decision_records_ingested_total',
      help: 'Decision records stored from runtimes',
      registers: [registry],
    }),
  };
}

class Tally implements RequestTally {
  private durations = new Float64Array(1024);
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly durationLabels: { method: string; route: string };

  constructor(
    private readonly requests: Counter<'method' | 'route' | 'status'>,
    private readonly duration: Histogram<'method' | 'route'>,
    private readonly labels: { method: string; route: string; status: string },
  ) {
    this.durationLabels = { method: labels.method, route: labels.route };
  }

  add(seconds: number): void {
    if (this.pending === this.durations.length) {
      const grown = new Float64Array(this.durations.length * 2);
      grown.set(this.durations);
      this.durations = grown;
    }
    this.durations[this.pending++] = seconds;
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), TALLY_FLUSH_MS);
      this.timer.unref();
    }
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === 0) return;
    this.requests.inc(this.labels, this.pending);
    for (let i = 0; i < this.pending; i++) this.duration.observe(this.durationLabels, this.durations[i]);
    this.pending = 0;
  }
}
