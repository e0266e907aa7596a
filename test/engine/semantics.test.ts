import { describe, expect, it, vi } from 'vitest';
import { evaluate, policyAllows } from '../../runtime/evaluate.ts';
import type { TenantPolicy } from '../../policy-schemas/types.gen.ts';
import { build, tool } from './build.ts';

const groups = [
  { name: 'read', includes: [] },
  { name: 'write', includes: [] },
  { name: 'all', includes: ['read', 'write'] },
  { name: 'top', includes: ['all'] },
];
const states = [{ name: 'review' }, { name: 'done' }];
const policy: TenantPolicy = {
  roles: {
    reader: { groups: ['read', 'default'], allow: ['core__*'], deny: ['core__secret'], requireApproval: [] },
    writer: { groups: ['top'], allow: ['core__write*', 'core__read'], deny: [], requireApproval: ['state_change'] },
    any: { groups: ['*'], allow: ['*'], deny: [], requireApproval: [] },
  },
  bindings: { 'agent:r': ['reader'], 'agent:w': ['writer'], 'agent:rw': ['reader', 'writer'], 'agent:any': ['any'] },
  profiles: { openai: { enable: [], disable: ['core__read'] } },
};
const loaded = build({
  groups,
  states,
  policy,
  tools: [
    tool('core__read', { groups: ['read'] }),
    tool('core__secret', { groups: ['read'] }),
    tool('core__write', { groups: ['write'], effect: 'state_change', availableInStates: ['review'] }),
    tool('core__write_gated', { groups: ['write'], requires: [{ fact: 'hostSession', in: ['ready'] }] }),
    tool('core__plain'),
    tool('core__quarantined', { status: 'quarantined' }),
    tool('core__off', { status: 'disabled' }),
    tool('core__unredacted', { redaction: undefined }),
    tool('core__gone', { status: 'removed' }),
    tool('mcp__x__y', { groups: ['read'] }),
  ],
});

const reasons = (r: ReturnType<typeof evaluate>) => Object.fromEntries(r.filtered.map((f) => [f.id, f.reason]));
const visible = (r: ReturnType<typeof evaluate>) => r.tools.map((t) => t.id);

describe('evaluate', () => {
  it('R6.2 filters every tool with no_role when the subject has no roles', () => {
    const r = evaluate(loaded, { subject: 'agent:nobody', groups: ['read'] });
    expect(r.roles).toEqual([]);
    expect(r.tools).toEqual([]);
    expect(new Set(r.filtered.map((f) => f.reason))).toEqual(new Set(['no_role']));
    expect(r.filtered).toHaveLength(9);
  });

  it('R6.6 leaves removed tools out of the bundle and names quarantined, disabled and unredacted tools', () => {
    const r = evaluate(loaded, { subject: 'agent:any', groups: ['*'] });
    const why = reasons(r);
    expect(why).not.toHaveProperty('core__gone');
    expect(why.core__quarantined).toBe('quarantined');
    expect(why.core__off).toBe('disabled');
    expect(why.core__unredacted).toBe('no_redaction');
  });

  it('R6.1 defaults to the default group and state undefined', () => {
    const r = evaluate(loaded, { subject: 'agent:r' });
    expect(r.groups).toEqual(['default']);
    expect(r.state).toBe('undefined');
    expect(visible(r)).toEqual(['core__plain']);
    expect(reasons(r).core__read).toBe('group');
  });

  it('R6.7 sees no tools when the request names an empty group list', () => {
    const r = evaluate(loaded, { subject: 'agent:any', groups: [] });
    expect(r.tools).toEqual([]);
    expect(reasons(r).core__plain).toBe('group');
  });

  it('R6.4 rejects the whole request, naming the groups, when a requested group is not permitted', () => {
    const r = evaluate(loaded, { subject: 'agent:r', groups: ['read', 'write', 'nope'] });
    expect(r.rejected).toEqual({ reason: 'group_not_permitted', groups: ['write', 'nope'] });
    expect(r.tools).toEqual([]);
    expect(r.filtered).toEqual([]);
    expect(r.roles).toEqual(['reader']);
  });

  it('R6.4 permits groups reached through a role group includes, transitively', () => {
    const r = evaluate(loaded, { subject: 'agent:w', groups: ['write'], state: 'review' });
    expect(r.rejected).toBeUndefined();
    expect(visible(r)).toEqual(['core__write']);
    expect(r.tools[0].decision).toBe('require_approval');
  });

  it('R6.3 expands requested groups through includes', () => {
    const r = evaluate(loaded, { subject: 'agent:w', groups: ['top'], state: 'review', facts: { hostSession: 'ready' } });
    expect(r.groups).toEqual(['all', 'read', 'top', 'write']);
    expect(visible(r)).toEqual(['core__read', 'core__write', 'core__write_gated']);
  });

  it('R6.8 names state when the tool is not available in the current state', () => {
    const r = evaluate(loaded, { subject: 'agent:w', groups: ['write'] });
    expect(reasons(r).core__write).toBe('state');
  });

  it('R6.9 denies a tool that matches a deny glob even when another role allows it', () => {
    const r = evaluate(loaded, { subject: 'agent:rw', groups: ['read'] });
    expect(reasons(r).core__secret).toBe('denied');
    expect(policyAllows(loaded, 'agent:rw', 'core__secret')).toBe(false);
  });

  it('R6.10 names not_allowed for a tool no role allows', () => {
    const r = evaluate(loaded, { subject: 'agent:r', groups: ['read'] });
    expect(reasons(r).mcp__x__y).toBe('not_allowed');
    expect(policyAllows(loaded, 'agent:r', 'mcp__x__y')).toBe(false);
    expect(policyAllows(loaded, 'agent:r', 'core__read')).toBe(true);
  });

  it('R6.11 checks runtime gates on the request facts, strictly by value and type', () => {
    const base = { subject: 'agent:w', groups: ['write'], state: 'review' };
    expect(reasons(evaluate(loaded, base)).core__write_gated).toBe('runtime_gate');
    expect(reasons(evaluate(loaded, { ...base, facts: { hostSession: 'closed' } })).core__write_gated).toBe('runtime_gate');
    expect(visible(evaluate(loaded, { ...base, facts: { hostSession: 'ready' } }))).toContain('core__write_gated');
  });

  it('R6.12 hides a tool the named profile disables and ignores an unknown profile', () => {
    expect(reasons(evaluate(loaded, { subject: 'agent:r', groups: ['read'], profile: 'openai' })).core__read).toBe('profile');
    expect(visible(evaluate(loaded, { subject: 'agent:r', groups: ['read'], profile: 'other' }))).toContain('core__read');
  });

  it('R6.14 asks for approval when the tool effect is in any of the subject roles requireApproval', () => {
    const r = evaluate(loaded, { subject: 'agent:rw', groups: ['write'], state: 'review' });
    expect(r.tools.find((t) => t.id === 'core__write')?.decision).toBe('require_approval');
  });

  it('R6.15 orders tools and filtered entries by tool id', () => {
    const r = evaluate(loaded, { subject: 'agent:any', groups: ['*'], state: 'review' });
    const ids = [...r.tools, ...r.filtered].map((t) => t.id);
    expect(ids).toHaveLength(9);
    expect(r.tools.map((t) => t.id)).toEqual([...r.tools.map((t) => t.id)].sort());
    expect(r.filtered.map((t) => t.id)).toEqual([...r.filtered.map((t) => t.id)].sort());
  });

  it('R6.15 answers a repeated request from the cache with an equal, frozen result', () => {
    const req = { subject: 'agent:w', groups: ['top'], state: 'review' };
    const a = evaluate(loaded, req);
    const b = evaluate(loaded, { ...req });
    expect(b).toBe(a);
    expect(Object.isFrozen(a.tools)).toBe(true);
    expect(() => (a.tools as unknown[]).push(1)).toThrow();
  });

  it('R6.11 keeps cache entries apart for requests that differ only in facts or connections', () => {
    const base = { subject: 'agent:w', groups: ['write'], state: 'review' };
    const a = evaluate(loaded, { ...base, facts: { hostSession: 'ready' } });
    const b = evaluate(loaded, { ...base, facts: { hostSession: true } });
    expect(visible(a)).toContain('core__write_gated');
    expect(visible(b)).not.toContain('core__write_gated');
  });

  it('R6.15 answers from the cache only a request equal in every field, whatever the caller does to its objects later', () => {
    const groups = ['write'];
    const facts: Record<string, string | number | boolean> = { hostSession: 'ready' };
    const req = { subject: 'agent:w', groups, state: 'review', facts };
    const first = evaluate(loaded, req);
    expect(visible(first)).toContain('core__write_gated');
    // The cached answer belongs to the request as it was: changing the caller's objects asks anew.
    facts.hostSession = 'starting';
    expect(visible(evaluate(loaded, req))).not.toContain('core__write_gated');
    groups[0] = 'read';
    expect(visible(evaluate(loaded, req))).not.toContain('core__write');
    // Absent groups are the default group; [] is no group; the same facts in another key order are the same request.
    expect(visible(evaluate(loaded, { subject: 'agent:r' }))).toContain('core__plain');
    expect(visible(evaluate(loaded, { subject: 'agent:r', groups: [] }))).toEqual([]);
    const two = { subject: 'agent:w', groups: ['write'], state: 'review', facts: { hostSession: 'ready', extra: 1 } };
    expect(evaluate(loaded, { ...two, facts: { extra: 1, hostSession: 'ready' } })).toBe(evaluate(loaded, two));
    // One fact more or less, or another profile, is another request.
    expect(visible(evaluate(loaded, { ...two, facts: { extra: 1 } }))).not.toContain('core__write_gated');
    expect(visible(evaluate(loaded, { subject: 'agent:r', groups: ['read'], profile: 'openai' }))).not.toContain('core__read');
    expect(visible(evaluate(loaded, { subject: 'agent:r', groups: ['read'] }))).toContain('core__read');
  });
});

describe('evaluate with connection grants', () => {
  const l = build({
    policy: {
      roles: { agent: { groups: ['default'], allow: ['core__*'], deny: [], requireApproval: [] } },
      bindings: { 'agent:a': ['agent'], 'agent:b': ['agent'] },
    },
    tools: [tool('core__crm', { requiresConnection: true }), tool('core__mail', { requiresConnection: true })],
    grants: [
      { connectionId: 'crm-prod', subjects: ['agent:a'], tools: ['core__crm'] },
      { connectionId: 'mail-old', subjects: ['agent'], tools: ['core__mail'], expiresAt: '2026-06-01T00:00:00Z' },
    ],
  });

  it('R6.13 needs an unexpired grant for the subject or one of its roles', () => {
    const r = evaluate(l, { subject: 'agent:a', at: '2026-05-01T00:00:00Z' });
    expect(visible(r)).toEqual(['core__crm', 'core__mail']);
    const b = evaluate(l, { subject: 'agent:b', at: '2026-05-01T00:00:00Z' });
    expect(visible(b)).toEqual(['core__mail']);
    expect(reasons(b).core__crm).toBe('no_connection');
  });

  it('R6.13 treats a grant as gone from its expiry instant on', () => {
    expect(reasons(evaluate(l, { subject: 'agent:a', at: '2026-06-01T00:00:00Z' })).core__mail).toBe('no_connection');
  });

  it('R6.13 answers a request without `at` from the cache only until the next grant expiry, then anew', () => {
    vi.useFakeTimers();
    try {
      vi.setSystemTime(new Date('2026-05-31T23:59:59.999Z'));
      const req = { subject: 'agent:a' };
      const before = evaluate(l, req);
      expect(visible(before)).toContain('core__mail');
      expect(evaluate(l, req)).toBe(before);
      vi.setSystemTime(new Date('2026-06-01T00:00:00Z'));
      expect(reasons(evaluate(l, req)).core__mail).toBe('no_connection');
      const cached = l.memo.results.size;
      expect(evaluate(l, req)).toBe(evaluate(l, req));
      // The out-of-date answer was replaced, not kept beside the new one.
      expect(l.memo.results.size).toBe(cached);
    } finally {
      vi.useRealTimers();
    }
  });

  it('R6.13 intersects grants with the request allowedConnectionIds', () => {
    const r = evaluate(l, { subject: 'agent:a', at: '2026-05-01T00:00:00Z', allowedConnectionIds: ['mail-old'] });
    expect(visible(r)).toEqual(['core__mail']);
    expect(reasons(r).core__crm).toBe('no_connection');
    expect(visible(evaluate(l, { subject: 'agent:a', at: '2026-05-01T00:00:00Z', allowedConnectionIds: [] }))).toEqual([]);
  });
});

describe('evaluate with unusual subject names', () => {
  it('R6.2 binds a subject called __proto__ like any other', () => {
    const policy = JSON.parse('{"roles":{"r":{"groups":["default"],"allow":["core__*"]}},"bindings":{"__proto__":["r"]}}');
    const l = build({ policy, tools: [tool('core__a')] });
    expect(evaluate(l, { subject: '__proto__' }).tools).toEqual([{ id: 'core__a', decision: 'allow' }]);
    expect(evaluate(l, { subject: 'constructor' }).roles).toEqual([]);
    expect(l.bundle.casbin.policy).toContainEqual(['g', '__proto__', 'role:r', 't1']);
  });
});

describe('evaluate with profile-scoped tools', () => {
  const l = build({
    policy: {
      roles: { r: { groups: ['default'], allow: ['core__*'], deny: [], requireApproval: [] } },
      bindings: { 'agent:a': ['r'] },
      profiles: { openai: { enable: ['core__patch'], disable: ['core__shared'] }, anthropic: { enable: ['core__edit'], disable: [] } },
    },
    tools: [tool('core__patch'), tool('core__edit'), tool('core__shared'), tool('mcp__x__scoped')],
  });
  const seen = (profile?: string) => visible(evaluate(l, { subject: 'agent:a', ...(profile === undefined ? {} : { profile }) }));

  it('R6.12 shows a tool some profile enables only under a profile that enables it', () => {
    expect(seen('openai')).toEqual(['core__patch']);
    expect(seen('anthropic')).toEqual(['core__edit', 'core__shared']);
    expect(reasons(evaluate(l, { subject: 'agent:a', profile: 'anthropic' })).core__patch).toBe('profile');
  });

  it('R6.12 treats no profile and an unknown profile alike: scoped tools hidden, disables of other profiles ignored', () => {
    expect(seen()).toEqual(['core__shared']);
    expect(seen('mistral')).toEqual(['core__shared']);
    expect(reasons(evaluate(l, { subject: 'agent:a' })).core__edit).toBe('profile');
  });

  it('R6.12 R6.5 never shows through a profile a tool the roles do not allow', () => {
    const other = build({
      policy: {
        roles: { r: { groups: ['default'], allow: ['core__a'], deny: [] } },
        bindings: { s: ['r'] },
        profiles: { openai: { enable: ['core__b'], disable: [] } },
      },
      tools: [tool('core__a'), tool('core__b')],
    });
    expect(reasons(evaluate(other, { subject: 's', profile: 'openai' })).core__b).toBe('not_allowed');
    expect(other.tools.filter((t) => other.profileScoped[t.pos] === 1).map((t) => t.id)).toEqual(['core__b']);
  });
});
