import { describe, expect, it } from 'vitest';
import { createMetrics } from './metrics.ts';

const LABELS = { method: 'GET', route: '/v1/tenants/:tenant/bundles/latest' };

describe('requestTally', () => {
  it('shows its requests in the HTTP metrics on every read, as if each had been observed at once', async () => {
    const metrics = createMetrics();
    const tally = metrics.requestTally({ ...LABELS, status: '304' });
    metrics.httpRequests.inc({ ...LABELS, status: '304' });
    metrics.httpDuration.observe(LABELS, 0.0002);
    for (const seconds of [0.0001, 0.0003, 0.002]) tally.add(seconds);
    const text = await metrics.registry.metrics();
    expect(text).toContain('toolgate_http_requests_total{method="GET",route="/v1/tenants/:tenant/bundles/latest",status="304"} 4');
    expect(text).toContain('toolgate_http_request_duration_seconds_bucket{le="0.0005",method="GET",route="/v1/tenants/:tenant/bundles/latest"} 3');
    expect(text).toContain('toolgate_http_request_duration_seconds_bucket{le="0.0025",method="GET",route="/v1/tenants/:tenant/bundles/latest"} 4');
    expect(text).toContain('toolgate_http_request_duration_seconds_count{method="GET",route="/v1/tenants/:tenant/bundles/latest"} 4');
    const sum = Number(/toolgate_http_request_duration_seconds_sum\{[^}]*\} ([\d.e-]+)/.exec(text)?.[1]);
    expect(sum).toBeCloseTo(0.0026, 10);
    // Read twice: nothing counted again.
    expect(await metrics.registry.getSingleMetricAsString('toolgate_http_requests_total')).toContain('status="304"} 4');
  });

  it('keeps every request when more arrive between reads than it first has room for', async () => {
    const metrics = createMetrics();
    const tally = metrics.requestTally({ ...LABELS, status: '304' });
    for (let i = 0; i < 5000; i++) tally.add(0.001);
    expect(await metrics.registry.getSingleMetricAsString('toolgate_http_requests_total')).toContain('status="304"} 5000');
    expect(await metrics.registry.getSingleMetricAsString('toolgate_http_request_duration_seconds')).toContain(
      'toolgate_http_request_duration_seconds_count{method="GET",route="/v1/tenants/:tenant/bundles/latest"} 5000',
    );
  });
});
