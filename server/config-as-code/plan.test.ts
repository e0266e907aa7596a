import { describe, expect, it } from 'vitest';
import { type Entity, type Kind, pathOf } from './layout.ts';
import { describePlan, planChanges } from './plan.ts';
import type { ServerEntity } from './read-server.ts';

const entity = (kind: Kind, key: string, doc: Record<string, unknown>, tenant?: string): Entity => ({
  kind,
  key,
  path: pathOf(kind, key, tenant),
  doc,
  ...(tenant ? { tenant } : {}),
});
const onServer = (e: Entity, version = 3): ServerEntity => ({ ...e, version });
const byPath = <T extends Entity>(list: T[]) => new Map(list.map((e) => [e.path, e]));

describe('planChanges', () => {
  it('creates included groups before the groups that include them, and groups before tools before tenants', () => {
    const desired = byPath([
      entity('tenant', 'acme', { id: 'acme', name: 'Acme' }),
      entity('policy', 'acme', { roles: {}, bindings: {}, profiles: {} }),
      entity('tool', 'core__a', { id: 'core__a', groups: ['all'] }),
      entity('group', 'all', { name: 'all', includes: ['z-read'] }),
      entity('group', 'z-read', { name: 'z-read', includes: [] }),
      entity('state', 'done', { name: 'done' }),
    ]);
    const plan = planChanges(desired, new Map(), { prune: false });
    expect(plan.map((c) => `${c.op} ${c.path}`)).toEqual([
      'create states/done.json',
      'create groups/z-read.json',
      'create groups/all.json',
      'create tools/core__a.json',
      'create tenants/acme/tenant.json',
      'create tenants/acme/policy.json',
    ]);
    expect(plan.find((c) => c.path === 'tenants/acme/policy.json')).toMatchObject({ withTenant: true });
  });

  it('deletes only with prune, in reverse order, never built-ins, never what goes with a deleted tenant', () => {
    const current = byPath([
      onServer(entity('group', 'default', { name: 'default' })),
      onServer(entity('group', 'base', { name: 'base', includes: [] })),
      onServer(entity('group', 'top', { name: 'top', includes: ['base'] })),
      onServer(entity('tool', 'core__old', { id: 'core__old', groups: ['top'] })),
      onServer(entity('tool', 'mcp__s__t', { id: 'mcp__s__t', source: { kind: 'mcp', server: 's', originalName: 't' } })),
      onServer(entity('tenant', 'gone', { id: 'gone', name: 'Gone' })),
      onServer(entity('policy', 'gone', { roles: {} })),
      onServer(entity('grant', 'c1', { connectionId: 'c1' }, 'gone')),
    ]);
    expect(planChanges(new Map(), current, { prune: false }).filter((c) => c.op !== 'note')).toEqual([]);
    const plan = planChanges(new Map(), current, { prune: true });
    expect(plan.map((c) => `${c.op} ${c.path}`)).toEqual([
      'delete tenants/gone/tenant.json',
      'delete tools/core__old.json',
      'delete groups/top.json',
      'delete groups/base.json',
      'note tools/mcp__s__t.json',
    ]);
    expect(plan.filter((c) => c.op === 'delete').every((c) => 'version' in c && c.version === 3)).toBe(true);
  });

  it('plans nothing for equal documents whatever their key order, and shows an update as a diff', () => {
    const current = byPath([onServer(entity('state', 's', { name: 's', description: 'old' }))]);
    expect(planChanges(byPath([entity('state', 's', { description: 'old', name: 's' })]), current, { prune: true })).toEqual([]);
    const plan = planChanges(byPath([entity('state', 's', { name: 's', description: 'new' })]), current, { prune: true });
    expect(plan).toEqual([expect.objectContaining({ op: 'update', path: 'states/s.json', version: 3 })]);
    expect(describePlan(plan)).toEqual([
      'update  states/s.json',
      '    @@ -1,4 +1,4 @@',
      '     {',
      '    -  "description": "old",',
      '    +  "description": "new",',
      '       "name": "s"',
      '     }',
      'Plan: 0 to create, 1 to update, 0 to delete.',
    ]);
  });
});
