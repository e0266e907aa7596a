import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { conformanceFailures, runtimeSubject } from '../../runtime/conformance.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { compileBundle, contentRevision } from '../../server/compiler/compile-bundle.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';
import { demoSnapshot } from './demo-snapshot.ts';

const options = { version: 4, previousRevision: null, issuedAt: '2026-01-01T00:00:00Z' };

function reversedEverywhere(s: Snapshot): Snapshot {
  const rev = <T>(xs: T[] | undefined) => (xs ? [...xs].reverse() : xs);
  const reorder = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).reverse()) as T;
  return {
    tenant: s.tenant,
    policy: reorder({
      ...s.policy,
      roles: Object.fromEntries(
        Object.entries(s.policy.roles ?? {})
          .reverse()
          .map(([k, r]) => [k, { ...r, groups: rev(r.groups), allow: rev(r.allow), deny: rev(r.deny), requireApproval: rev(r.requireApproval) }]),
      ),
      bindings: Object.fromEntries(
        Object.entries(s.policy.bindings ?? {})
          .reverse()
          .map(([k, v]) => [k, [...v].reverse()]),
      ),
    }),
    tools: s.tools.map((t) => reorder({ ...t, groups: rev(t.groups), availableInStates: rev(t.availableInStates) })).reverse(),
    groups: s.groups.map((g) => ({ ...g, includes: rev(g.includes) })).reverse(),
    states: rev(s.states)!,
    grants: s.grants.map((g) => ({ ...g, subjects: [...g.subjects].reverse() as typeof g.subjects })).reverse(),
  };
}

describe('reproducible builds', () => {
  for (const tenant of ['acme-research', 'globex-eng']) {
    it(`compiles ${tenant} to byte-identical bundles however the data is ordered`, () => {
      const a = compileBundle(demoSnapshot(tenant), options);
      const b = compileBundle(reversedEverywhere(demoSnapshot(tenant)), options);
      if (!a.ok || !b.ok) throw new Error('compile failed');
      expect(b.text).toBe(a.text);
      expect(b.revision).toBe(a.revision);
    });
  }

  it('keeps the revision when only version, previous revision or issue time change', () => {
    const a = compileBundle(demoSnapshot('acme-research'), options);
    const b = compileBundle(demoSnapshot('acme-research'), { version: 9, previousRevision: `sha256:${'1'.repeat(64)}`, issuedAt: '2027-05-05T10:00:00Z' });
    if (!a.ok || !b.ok) throw new Error('compile failed');
    expect(b.revision).toBe(a.revision);
    expect(b.text).not.toBe(a.text);
    expect(b.bundle.expiresAt).toBe('2027-05-06T10:00:00.000Z');
  });

  it('changes the revision when the meaning changes', () => {
    const changed = demoSnapshot('acme-research');
    changed.policy.roles!.researcher.deny = ['core__text-completion'];
    const a = compileBundle(demoSnapshot('acme-research'), options);
    const b = compileBundle(changed, options);
    if (!a.ok || !b.ok) throw new Error('compile failed');
    expect(b.revision).not.toBe(a.revision);
  });

  it('states a revision that is the hash of the content without the envelope fields', () => {
    const r = compileBundle(demoSnapshot('globex-eng'), options);
    if (!r.ok) throw new Error('compile failed');
    const parsed = JSON.parse(r.text);
    expect(contentRevision(parsed)).toBe(parsed.revision);
    expect(canonicalJson(parsed)).toBe(r.text);
    expect(Object.keys(parsed)).toEqual([
      'casbin',
      'catalog',
      'conformance',
      'expiresAt',
      'format',
      'issuedAt',
      'policy',
      'previousRevision',
      'revision',
      'tenant',
      'version',
    ]);
  });

  it('carries conformance vectors that its own bytes reproduce, covering every outcome the demo tenants can reach', () => {
    const kinds = new Set<string>();
    for (const tenant of ['acme-research', 'globex-eng']) {
      const r = compileBundle(demoSnapshot(tenant), options);
      if (!r.ok) throw new Error('compile failed');
      const loaded = loadBundle(JSON.parse(r.text));
      expect(conformanceFailures(r.bundle.conformance, runtimeSubject(loaded))).toEqual([]);
      for (const v of r.bundle.conformance) {
        if ('call' in v) kinds.add(v.expect.errorCode ?? v.expect.decision);
        else {
          if (v.expect.rejected) kinds.add('rejected');
          for (const reason of Object.values(v.expect.hidden ?? {})) kinds.add(reason);
          for (const decision of Object.values(v.expect.decisions ?? {})) kinds.add(decision);
        }
      }
    }
    // The demo inventory has no quarantined, disabled or unredacted tool, and no role denies a tool its groups reach.
    expect([...kinds].sort()).toEqual(
      [
        'allow',
        'group',
        'invalid_json',
        'no_connection',
        'no_role',
        'not_allowed',
        'policy_denied',
        'profile',
        'rejected',
        'require_approval',
        'runtime_gate',
        'state',
        'unavailable',
        'validation',
      ].sort(),
    );
  });
});
