import { describe, expect, it } from 'vitest';
import type { Bundle, BundleTool } from '../policy-schemas/types.gen.ts';
import { createView } from './decide.ts';
import { loadBundle } from './load-bundle.ts';
import { planBatch } from './plan-batch.ts';

// A hand-written bundle (no compiler): four visible tools with different parallel hints.
function tool(id: string, parallel?: BundleTool['parallel']): BundleTool {
  return {
    id,
    description: id,
    inputSchema: { type: 'object' },
    effect: 'read_only',
    redaction: { allow: [] },
    groups: ['default'],
    requiresConnection: false,
    definitionHash: `sha256:${'0'.repeat(64)}`,
    ...(parallel ? { parallel } : {}),
  };
}
const tools = [tool('t__a', { safe: true }), tool('t__b', { safe: true, resourceKey: 'k' }), tool('t__c', { safe: true, resourceKey: 'k' }), tool('t__d')];
const bundle = {
  format: 'toolgate.bundle/v2',
  tenant: 't',
  version: 1,
  revision: `sha256:${'1'.repeat(64)}`,
  previousRevision: null,
  issuedAt: '2026-01-01T00:00:00Z',
  expiresAt: '2027-01-01T00:00:00Z',
  catalog: { tools, groups: [{ name: 'default', description: '', includes: [] }], states: [{ name: 'undefined', description: '' }] },
  policy: {
    roles: { r: { groups: ['default'], allow: ['t__*'], deny: [], requireApproval: [] } },
    bindings: { s: ['r'] },
    profiles: {},
    bundleTtlSeconds: 60,
    grants: [],
  },
  casbin: { model: '', policy: [], request: [] },
  conformance: [],
} as Bundle;
const view = createView(loadBundle(bundle), { subject: 's' });
const ids2 = (plan: ReturnType<typeof planBatch>) => plan.groups.map((g) => `${g.parallel ? 'P' : 'S'}:${g.calls.map((c) => c.toolCallId).join('')}`);

describe('planBatch', () => {
  it('R9.2 runs parallel-safe calls together, serializes a shared resource key, isolates unsafe calls', () => {
    const plan = planBatch(view, [
      { toolCallId: '1', name: 't__a' },
      { toolCallId: '2', name: 't__b' },
      { toolCallId: '3', name: 't__a' },
      { toolCallId: '4', name: 't__c' },
      { toolCallId: '5', name: 't__d' },
      { toolCallId: '6', name: 't__a' },
    ]);
    expect(ids2(plan)).toEqual(['P:123', 'P:4', 'S:5', 'P:6']);
  });

  it('R9.1 lists rejected calls first and keeps them out of the groups', () => {
    const plan = planBatch(view, [
      { toolCallId: 'x', name: 'nope' },
      { toolCallId: 'y', name: 't__a', arguments: '{' },
      { toolCallId: 'z', name: 't__a' },
    ]);
    expect(plan.rejected.map((r) => [r.toolCallId, r.errorCode])).toEqual([
      ['x', 'unavailable'],
      ['y', 'invalid_json'],
    ]);
    expect(ids2(plan)).toEqual(['P:z']);
  });

  it('R9.1 plans an empty batch as nothing', () => {
    expect(planBatch(view, [])).toEqual({ rejected: [], groups: [] });
  });

  it('R9.3 derives the same ids for calls without one, every time', () => {
    const calls = [
      { name: 't__a', arguments: '{}' },
      { name: 't__a', arguments: '{}' },
    ];
    const a = planBatch(view, calls);
    expect(a).toEqual(planBatch(view, calls));
    expect(a.groups[0].calls[0].toolCallId).not.toBe(a.groups[0].calls[1].toolCallId);
  });
});
