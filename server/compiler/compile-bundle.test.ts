import { describe, expect, it } from 'vitest';
import type { Tool } from '../../policy-schemas/types.gen.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { compileBundle } from './compile-bundle.ts';
import type { Snapshot } from './compile-bundle.ts';

const opts = { version: 2, previousRevision: null, issuedAt: '2026-01-01T00:00:00Z' };
const tool = (id: string, extra: Partial<Tool> = {}): Tool => ({
  id,
  description: id,
  inputSchema: { type: 'object' },
  effect: 'read_only',
  redaction: { allow: [] },
  ...extra,
});
const snap = (parts: Partial<Snapshot>): Snapshot => ({ tenant: { id: 't', name: 'T' }, policy: {}, tools: [], groups: [], states: [], grants: [], ...parts });

describe('compileBundle', () => {
  it('adds the default group and the undefined state when the inventory lacks them', () => {
    const r = compileBundle(snap({}), opts);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.bundle.catalog.groups.map((g) => g.name)).toEqual(['default']);
    expect(r.bundle.catalog.states.map((s) => s.name)).toEqual(['undefined']);
    expect(r.bundle.expiresAt).toBe('2026-01-02T00:00:00.000Z');
  });

  it('leaves removed tools out and keeps only id, pin and reason for tools that can never be visible', () => {
    const r = compileBundle(
      snap({
        tools: [
          tool('core__gone', { status: 'removed' }),
          tool('core__q', { status: 'quarantined' }),
          tool('core__raw', { redaction: undefined }),
          tool('core__ok'),
        ],
        policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { s: ['r'] } },
      }),
      opts,
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.bundle.catalog.tools.map((t) => [t.id, Object.keys(t).sort().join(',')])).toEqual([
      // Defaults left out: groups ["default"] and requiresConnection false are not written.
      ['core__ok', 'definitionHash,description,effect,id,inputSchema,redaction'],
      ['core__q', 'definitionHash,excluded,id'],
      ['core__raw', 'definitionHash,excluded,id'],
    ]);
    expect(evaluate(loadBundle(r.bundle), { subject: 's', groups: ['*'] }).filtered).toEqual([
      { id: 'core__q', reason: 'quarantined' },
      { id: 'core__raw', reason: 'no_redaction' },
    ]);
  });

  it('keeps a tool without redaction out of reach (no_redaction) even when a role names it exactly', () => {
    const tools = [tool('core__raw', { redaction: undefined })];
    const r = compileBundle(
      snap({
        tools,
        policy: { roles: { r: { groups: ['*'], allow: ['core__raw'] } }, bindings: { 'agent:a': ['r'] }, profiles: { p: { enable: ['core__raw'] } } },
      }),
      opts,
    );
    expect(r.ok).toBe(true);
    if (r.ok) {
      const result = evaluate(loadBundle(JSON.parse(r.text)), { subject: 'agent:a' });
      expect(result.filtered).toContainEqual({ id: 'core__raw', reason: 'no_redaction' });
      expect(result.tools).toEqual([]);
    }
  });

  it('collects schema errors of every entity at once, with entity pointers', () => {
    const r = compileBundle(
      snap({
        tools: [{ id: 'core__x', description: 'x', inputSchema: { type: 'object' }, effect: 'bad' } as unknown as Tool],
        groups: [{ name: '' }],
        grants: [{ connectionId: 'c', subjects: [], tools: ['core__x'] } as never],
        policy: { roles: { r: { groups: 'all' } } } as never,
      }),
      { version: 0, previousRevision: null, issuedAt: 'yesterday' },
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      const pointers = r.errors.map((e) => e.pointer);
      expect(pointers).toEqual(
        expect.arrayContaining(['/tools/core__x/effect', '/groups/0/name', '/grants/c/subjects', '/policy/roles/r/groups', '/version', '/issuedAt']),
      );
    }
  });

  it('writes includes as given (runtimes close them) and refuses include cycles', () => {
    const ok = compileBundle(snap({ groups: [{ name: 'a', includes: ['b'] }, { name: 'b', includes: ['c'] }, { name: 'c' }] }), opts);
    if (!ok.ok) throw new Error(JSON.stringify(ok.errors));
    expect(ok.bundle.catalog.groups.find((g) => g.name === 'a')?.includes).toEqual(['b']);
    expect(loadBundle(ok.bundle).groupClosure.get('a')).toEqual(['a', 'b', 'c']);
    const cyc = compileBundle(
      snap({
        groups: [
          { name: 'a', includes: ['b'] },
          { name: 'b', includes: ['a'] },
        ],
      }),
      opts,
    );
    expect(cyc.ok).toBe(false);
    if (!cyc.ok) expect(cyc.errors.every((e) => e.code === 'cycle')).toBe(true);
  });
});

describe('compileBundle on a frozen tool list (the inventory cache), whose work it keeps', () => {
  const policy = { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } };
  const list = () => [
    tool('core__a', { inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }),
    tool('core__b', { inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, groups: ['g1'] }),
    tool('core__c', { inputSchema: { properties: { n: { type: 'integer' } }, type: 'object' } }),
    tool('core__gone', { status: 'removed' }),
  ];
  const compile = (tools: Tool[], extra: Partial<Snapshot> = {}) => compileBundle(snap({ tools, policy, groups: [{ name: 'g1' }], ...extra }), opts);

  it('writes the same bytes as for an unfrozen copy, policy edit after policy edit', () => {
    const frozen = Object.freeze(list()) as Tool[];
    for (const subject of ['agent:b', 'agent:c', 'agent:d']) {
      const edited = { ...policy, bindings: { ...policy.bindings, [subject]: ['r'] } };
      const kept = compile(frozen, { policy: edited });
      const fresh = compile(list(), { policy: edited });
      if (!kept.ok || !fresh.ok) throw new Error('does not compile');
      expect(kept.text).toBe(fresh.text);
      expect(Object.keys(kept.bundle.policy.bindings ?? {})).toContain(subject);
    }
  });

  it('sees a tool edit, which comes as another list', () => {
    const before = compile(Object.freeze(list()) as Tool[]);
    const tools = list();
    tools[2] = { ...tools[2], description: 'edited', inputSchema: { type: 'object', properties: { n: { type: 'string' } } } };
    const after = compile(Object.freeze(tools) as Tool[]);
    if (!before.ok || !after.ok) throw new Error('does not compile');
    expect(after.revision).not.toBe(before.revision);
    const c = after.bundle.catalog.tools.find((t) => t.id === 'core__c') as { description?: string; inputSchema?: unknown };
    expect(c.description).toBe('edited');
    expect(c.inputSchema).toEqual({ type: 'object', properties: { n: { type: 'string' } } });
  });

  it('finds a schema opened by a tool edit: what the vector searches found is kept per list, not per tool id', () => {
    const closed = { type: 'object', additionalProperties: false, properties: { q: { type: 'string' } } };
    const tools = (schema: Record<string, unknown>) =>
      Object.freeze([tool('core__a', { inputSchema: closed }), tool('core__b', { inputSchema: schema })]) as Tool[];
    const smuggling = (tools: Tool[]) => {
      const r = compile(tools);
      if (!r.ok) throw new Error('does not compile');
      return r.bundle.conformance.filter((v) => v.rules.includes('R7.10') && !v.rules.includes('R7.8'));
    };
    const before = tools(closed);
    expect(smuggling(before)).toEqual([]);
    expect(smuggling(before)).toEqual([]);
    const opened = smuggling(tools({ type: 'object', properties: { q: { type: 'string' } } }));
    expect(opened).toHaveLength(1);
    expect((opened[0] as { call: { name: string } }).call.name).toBe('core__b');
  });

  it('judges the tools again when the groups they may name change', () => {
    const frozen = Object.freeze(list()) as Tool[];
    expect(compile(frozen).ok).toBe(true);
    const r = compile(frozen, { groups: [] });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toContainEqual({ pointer: '/tools/core__b/groups/0', message: 'unknown group "g1"', code: 'unknown_reference' });
    expect(compile(frozen).ok).toBe(true);
  });

  it('reports a tool failing its schema at every compile of the list', () => {
    const frozen = Object.freeze([...list(), { id: 'core__bad', effect: 'nonsense' } as unknown as Tool]) as Tool[];
    for (let i = 0; i < 2; i++) {
      const r = compile(frozen);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.errors.some((e) => e.pointer.startsWith('/tools/core__bad'))).toBe(true);
    }
  });
});
