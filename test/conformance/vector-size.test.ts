// A bundle's conformance vectors stay a small part of it: at most a tenth of its bytes once it
// holds 200 tools (DESIGN "Conformance vectors and the spec"), on the benchmark tenants' policy
// (5 roles, 20 subjects, 20 groups, grants and a profile) over catalogs whose tools share a few
// input schemas (the smallest bundles, so the hardest case) or each have their own.
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { benchSnapshot, benchTools } from '../engine/bench-tenant.ts';

function share(tools: number, distinct: boolean, tenant: number): { vectors: number; bytes: number; share: number } {
  const r = compileBundle(benchSnapshot(tenant, benchTools({ distinct }).slice(0, tools)), {
    version: 1,
    previousRevision: null,
    issuedAt: '2026-01-01T00:00:00.000Z',
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors.slice(0, 3)));
  const vectorBytes = Buffer.byteLength(canonicalJson(r.bundle.conformance));
  return { vectors: r.bundle.conformance.length, bytes: r.bytes.length, share: vectorBytes / r.bytes.length };
}

describe('conformance vector bytes', () => {
  for (const distinct of [false, true]) {
    for (const tenant of [0, 1, 2]) {
      it(`are at most a tenth of a 200-tool bundle (${distinct ? 'distinct' : 'shared'} input schemas, tenant ${tenant})`, () => {
        const s = share(200, distinct, tenant);
        expect(s.vectors).toBeGreaterThan(30);
        expect(s.share).toBeLessThanOrEqual(0.1);
      });
    }
  }

  it('take a smaller share as the catalog grows', () => {
    const at200 = share(200, false, 0).share;
    const at400 = share(400, false, 0).share;
    expect(at400).toBeLessThan(at200);
    expect(at400).toBeLessThanOrEqual(0.1);
  });
});
