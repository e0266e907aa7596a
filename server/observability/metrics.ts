import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type Metrics = {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  auditEvents: Counter<'action'>;
  /** Decision records stored (optional so hand-built deps in tests need not carry it). */
  decisionsIngested?: Counter;
};

/** One registry per server (not the global one), so servers in tests do not share counters. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'toolgate_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'toolgate_http_requests_total',
      help: 'HTTP requests by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'toolgate_http_request_duration_seconds',
      help: 'HTTP request latency by route pattern',
      labelNames: ['method', 'route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60],
      registers: [registry],
    }),
    auditEvents: new Counter({
      name: 'toolgate_audit_events_written_total',
      help: 'Audit events committed, by action',
      labelNames: ['action'],
      registers: [registry],
    }),
    decisionsIngested: new Counter({
      name: 'toolgate_decision_records_ingested_total',
      help: 'Decision records stored from runtimes',
      registers: [registry],
    }),
  };
}
