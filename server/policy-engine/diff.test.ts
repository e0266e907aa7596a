import { describe, expect, it } from 'vitest';
import type { TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { compileBundle } from '../compiler/compile-bundle.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { randomTenant } from '../../test/conformance/tenants.ts';
import { diffBundles, summarize } from './diff.ts';

const tool = (id: string, extra: Partial<Tool> = {}): Tool => ({
  id,
  description: id,
  inputSchema: { type: 'object' },
  effect: 'read_only',
  redaction: { allow: [] },
  ...extra,
});
const tools = [tool('core__a'), tool('core__b', { effect: 'state_change' }), tool('core__c', { groups: ['other'] })];
const groups = [{ name: 'other' }];
function bundle(policy: TenantPolicy, list = tools) {
  const r = compileBundle(
    { tenant: { id: 't', name: 'T' }, policy, tools: list, groups, states: [], grants: [] },
    { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00Z' },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.bundle;
}
const before = bundle({ roles: { dev: { groups: ['default'], allow: ['core__*'], deny: [], requireApproval: [] } }, bindings: { 'agent:x': ['dev'] } });
const after = bundle(
  {
    roles: {
      dev: { groups: ['default', 'other'], allow: ['core__*'], deny: ['core__a'], requireApproval: ['state_change'] },
      ops: { groups: ['*'], allow: ['core__c'], deny: [], requireApproval: [] },
    },
    bindings: { 'agent:x': ['dev'], 'agent:y': ['ops'] },
  },
  [...tools, tool('core__d')],
);

describe('diffBundles', () => {
  it('names added tools, per-role reach and every changed decision, the same with and without Casbin', async () => {
    const d = await diffBundles({ version: 1, bundle: before }, { version: 2, bundle: after });
    expect(d.identical).toBe(false);
    expect(d.catalog).toEqual({ added: ['core__d'], removed: [], changed: [] });
    expect(d.roles).toEqual([
      { role: 'dev', status: 'changed', added: ['core__c', 'core__d'], removed: ['core__a'] },
      { role: 'ops', status: 'added', added: ['core__c'], removed: [] },
    ]);
    expect(d.decisions).toEqual([
      { subject: 'agent:x', tool: 'core__a', from: 'allow', to: 'deny' },
      { subject: 'agent:x', tool: 'core__b', from: 'allow', to: 'require_approval' },
      { subject: 'agent:x', tool: 'core__c', from: 'deny', to: 'allow' },
      { subject: 'agent:x', tool: 'core__d', from: 'deny', to: 'allow' },
      { subject: 'agent:y', tool: 'core__c', from: 'deny', to: 'allow' },
    ]);
    expect(await diffBundles({ version: 1, bundle: before }, { version: 2, bundle: after }, { casbin: true })).toEqual(d);
  });

  it('reports a bundle against itself as identical with no changes', async () => {
    const d = await diffBundles({ version: 1, bundle: before }, { version: 'draft', bundle: before }, { casbin: true });
    expect(d).toMatchObject({ identical: true, catalog: { added: [], removed: [], changed: [] }, roles: [], decisions: [] });
  });
});

describe('tenant enforcers', () => {
  it('builds one enforcer per tenant revision and reuses it', async () => {
    const { TenantEnforcers } = await import('./enforcer.ts');
    const cache = new TenantEnforcers(2);
    const e1 = await cache.get('t', before.revision, before.casbin);
    expect(await cache.get('t', before.revision, before.casbin)).toBe(e1);
    const e2 = await cache.get('t', after.revision, after.casbin);
    expect(e2).not.toBe(e1);
    expect(e1.allows('agent:x', 'core__a')).toBe(true);
    expect(e2.allows('agent:x', 'core__a')).toBe(false);
    expect(e2.allows('agent:x', 'core__a') || e2.allows('agent:y', 'core__a')).toBe(false);
  });
});

describe('summarize', () => {
  it('counts the tools added and removed and the decisions changed, as the full diff lists them', async () => {
    const s = await summarize(after, before);
    expect(s).toEqual({
      tools: 4,
      callable: 4,
      excluded: 0,
      roles: 2,
      subjects: 2,
      grants: 0,
      changes: { toolsAdded: 1, toolsRemoved: 0, decisionsChanged: 5 },
    });
    expect((await summarize(before, after)).changes).toEqual({ toolsAdded: 0, toolsRemoved: 1, decisionsChanged: 5 });
    expect((await summarize(before, null)).changes).toEqual({ toolsAdded: 0, toolsRemoved: 0, decisionsChanged: 0 });
    // Loaded already, either side: the same counts.
    expect(await summarize(loadBundle(after), loadBundle(before))).toEqual(s);
    expect(await summarize(after, loadBundle(before))).toEqual(s);
  });

  it('agrees with diffBundles on randomized tenants (excluded tools, several roles, approvals)', async () => {
    let changed = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const compile = (snap: ReturnType<typeof randomTenant>) => {
        const r = compileBundle(snap, { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00Z' });
        if (!r.ok) throw new Error(JSON.stringify(r.errors));
        return r.bundle;
      };
      // Two tenants of one seed family: different tools, roles and bindings.
      const a = compile(randomTenant(seed));
      const b = compile({ ...randomTenant(seed + 1000), tenant: randomTenant(seed).tenant });
      const d = await diffBundles({ version: 1, bundle: a }, { version: 2, bundle: b });
      const s = await summarize(b, a);
      expect(s.changes, `seed ${seed}`).toEqual({
        toolsAdded: d.catalog.added.length,
        toolsRemoved: d.catalog.removed.length,
        decisionsChanged: d.decisions.length,
      });
      if (d.decisions.length > 0) changed++;
    }
    expect(changed).toBeGreaterThan(20);
  });
});
