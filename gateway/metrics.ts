import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The gateway's own Prometheus registry: calls by decision and outcome, their timing, sessions, upstreams. */
export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;

export function createGatewayMetrics() {
  const registry = new Registry();
  const calls = new Counter({
    name: 'toolgate_gateway_calls_total',
    help: 'tools/call requests by policy decision and refusal code (empty when the call went through).',
    labelNames: ['decision', 'error_code'] as const,
    registers: [registry],
  });
  const callSeconds = new Histogram({
    name: 'toolgate_gateway_call_duration_seconds',
    help: 'Time from receiving a tools/call to answering it, by outcome (allowed calls include the upstream).',
    labelNames: ['outcome'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const lists = new Counter({ name: 'toolgate_gateway_tools_list_total', help: 'tools/list requests answered.', registers: [registry] });
  const sessions = new Gauge({ name: 'toolgate_gateway_sessions', help: 'Open client sessions.', registers: [registry] });
  const upstreamUp = new Gauge({
    name: 'toolgate_gateway_upstream_up',
    help: '1 when the upstream is connected and listed.',
    labelNames: ['upstream'] as const,
    registers: [registry],
  });
  const bundleVersion = new Gauge({ name: 'toolgate_gateway_bundle_version', help: 'Version of the bundle enforced (0 when none).', registers: [registry] });
  const unauthorized = new Counter({
    name: 'toolgate_gateway_unauthorized_total',
    help: 'Requests refused for a missing or unknown key, or rate limited.',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  return { registry, calls, callSeconds, lists, sessions, upstreamUp, bundleVersion, unauthorized };
}
