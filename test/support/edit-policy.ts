import { expect } from 'vitest';
import type { TestApp } from './harness.ts';

/**
 * Changes a tenant's draft policy the way an editor does: reads it with its ETag, applies
 * `change` to a copy and saves it under If-Match, expecting the save to succeed (a test that
 * means to see a refused save calls the API itself).
 */
export async function editPolicy(
  t: TestApp,
  tenant: string,
  change: (policy: Record<string, any>) => void,
  opts: { token?: string; reason?: string } = {},
): Promise<void> {
  const current = await t.request('GET', `/v1/tenants/${tenant}/policy`, { token: opts.token });
  expect(current.status, current.text).toBe(200);
  const policy = structuredClone(current.json);
  change(policy);
  const saved = await t.request('PUT', `/v1/tenants/${tenant}/policy`, {
    body: policy,
    headers: { 'if-match': current.headers.get('etag')!, ...(opts.reason ? { 'toolgate-reason': opts.reason } : {}) },
    token: opts.token,
  });
  expect(saved.status, saved.text).toBe(200);
}
