// One semantics: DESIGN.md "Semantics" written out longhand over the raw snapshot (no index, no
// bitsets, no caches) against compile → loadBundle → evaluate, on randomized inventories,
// policies, grants and requests.
import { describe, expect, it } from 'vitest';
import type { EvaluationRequest, EvaluationResult, FilterReason, Group, Tool } from '../../policy-schemas/types.gen.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { globMatches } from '../../runtime/glob.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { rng as seededRng } from '../support/seeded-random.ts';

function referenceEvaluate(s: Snapshot, r: EvaluationRequest): EvaluationResult {
  const tools = s.tools.filter((t) => (t.status ?? 'active') !== 'removed').sort((a, b) => (a.id < b.id ? -1 : 1));
  const includes = new Map<string, string[]>(s.groups.map((g) => [g.name, g.includes ?? []]));
  const closure = (g: string): string[] => {
    const seen = new Set([g]);
    const queue = [g];
    while (queue.length) for (const x of includes.get(queue.shift()!) ?? []) if (!seen.has(x)) seen.add(x), queue.push(x);
    return [...seen];
  };
  const roleNames = s.policy.bindings?.[r.subject] ?? [];
  const roles = roleNames.map((n) => s.policy.roles![n]);
  const requested = r.groups ?? ['default'];
  const expanded = new Set(requested.flatMap(closure));
  const state = r.state ?? 'undefined';
  const base = { roles: [...roleNames].sort(), groups: [...expanded].sort(), state };
  if (roles.length === 0) return { ...base, tools: [], filtered: tools.map((t) => ({ id: t.id, reason: 'no_role' as FilterReason })) };
  const anyGroup = roles.some((role) => (role.groups ?? []).includes('*'));
  const permitted = new Set(roles.flatMap((role) => (role.groups ?? []).flatMap(closure)));
  const refused = anyGroup ? [] : [...new Set(requested.filter((g) => !permitted.has(g)))];
  if (refused.length) return { ...base, tools: [], filtered: [], rejected: { reason: 'group_not_permitted', groups: refused } };
  const principals = new Set([r.subject, ...roleNames]);
  const at = r.at ? Date.parse(r.at) : Date.now();
  const out: EvaluationResult = { ...base, tools: [], filtered: [] };
  for (const t of tools) {
    const status = t.status ?? 'active';
    const toolGroups = t.groups ?? ['default'];
    let reason: FilterReason | undefined;
    if (status === 'quarantined' || status === 'disabled') reason = status;
    else if (!t.redaction) reason = 'no_redaction';
    else if (!expanded.has('*') && !toolGroups.some((g) => expanded.has(g))) reason = 'group';
    else if (t.availableInStates && !t.availableInStates.includes('*') && !t.availableInStates.includes(state)) reason = 'state';
    else if (roles.some((role) => (role.deny ?? []).some((g) => globMatches(g, t.id)))) reason = 'denied';
    else if (!roles.some((role) => (role.allow ?? []).some((g) => globMatches(g, t.id)))) reason = 'not_allowed';
    else if ((t.requires ?? []).some((gate) => !(gate.fact in (r.facts ?? {})) || !gate.in.includes(r.facts![gate.fact]))) reason = 'runtime_gate';
    else if (r.profile !== undefined && (s.policy.profiles?.[r.profile]?.disable ?? []).includes(t.id)) reason = 'profile';
    else if (
      t.requiresConnection &&
      !s.grants.some(
        (g) =>
          g.subjects.some((x) => principals.has(x)) &&
          g.tools.some((glob) => globMatches(glob, t.id)) &&
          (g.expiresAt === undefined || at < Date.parse(g.expiresAt)) &&
          (r.allowedConnectionIds === undefined || r.allowedConnectionIds.includes(g.connectionId)),
      )
    )
      reason = 'no_connection';
    if (reason) out.filtered.push({ id: t.id, reason });
    else out.tools.push({ id: t.id, decision: roles.some((role) => (role.requireApproval ?? []).includes(t.effect)) ? 'require_approval' : 'allow' });
  }
  return out;
}

/** The seeded picks, and `someOr`: some, or the fallback when that came out empty. */
function rng(seed: number) {
  const r = seededRng(seed);
  const someOr = <T>(xs: readonly T[], max: number, fallback: T[]): T[] => {
    const got = r.some(xs, max);
    return got.length ? got : fallback;
  };
  return { ...r, someOr };
}

const GROUPS = ['default', 'g1', 'g2', 'g3', 'g4'];
const STATES = ['undefined', 's1', 's2'];

function randomSnapshot(seed: number): { snapshot: Snapshot; subjects: string[]; connections: string[] } {
  const r = rng(seed);
  const ids = [
    ...new Set(
      Array.from({ length: 4 + r.int(16) }, () => `${r.pick(['core', 'mcp__a', 'host'])}__${r.pick(['get', 'set', 'run', 'read_file', 'x'])}${r.int(4)}`),
    ),
  ];
  const tools: Tool[] = ids.map((id) => ({
    id,
    description: id,
    inputSchema: { type: 'object' },
    effect: r.pick(['read_only', 'state_change', 'external_side_effect'] as const),
    ...(r.next() < 0.85 ? { redaction: { allow: ['ok'] } } : {}),
    ...(r.next() < 0.8 ? { groups: r.someOr(GROUPS, 2, ['default']) } : {}),
    ...(r.next() < 0.4 ? { availableInStates: r.next() < 0.2 ? ['*'] : r.someOr(STATES, 2, ['s1']) } : {}),
    ...(r.next() < 0.3
      ? {
          requires: [
            {
              fact: r.pick(['hostSession', 'env']),
              in: r.someOr<string | number | boolean>(['ready', 'prod', 1, true], 2, ['ready']) as [string | number | boolean],
            },
          ],
        }
      : {}),
    ...(r.next() < 0.3 ? { requiresConnection: true } : {}),
    status: r.pick(['active', 'active', 'active', 'active', 'quarantined', 'disabled', 'removed'] as const),
  }));
  // Includes only point "up" the list, so there is never a cycle.
  const groups: Group[] = GROUPS.map((name, i) => ({ name, includes: GROUPS.slice(i + 1).filter(() => r.next() < 0.25) }));
  const glob = () => {
    const id = r.pick(ids);
    return r.pick([
      `${id.slice(0, 1 + r.int(id.length))}*`,
      `*${id.slice(r.int(id.length))}`,
      `*${r.pick(['get', 'read', 'x'])}*`,
      '*',
      `${r.pick(['core', 'host', 'mcp__a'])}__*`,
    ]);
  };
  const roleNames = ['r1', 'r2', 'r3'].slice(0, 1 + r.int(3));
  const roles = Object.fromEntries(
    roleNames.map((n) => [
      n,
      {
        groups: r.next() < 0.2 ? ['*'] : r.some(GROUPS, 3),
        allow: [...new Set(Array.from({ length: r.int(4) }, glob))],
        deny: [...new Set(Array.from({ length: r.int(2) }, glob))],
        requireApproval: r.some(['read_only', 'state_change', 'external_side_effect'] as const, 2),
      },
    ]),
  );
  const subjects = ['agent:a', 'agent:b', 'agent:c', 'agent:d'];
  const bindings = Object.fromEntries(subjects.filter(() => r.next() < 0.8).map((s) => [s, r.some(roleNames, 2)]));
  const profiles = { p: { enable: [], disable: r.some(ids, 3) } };
  const connections = ['c1', 'c2', 'c3'];
  const principals = [...Object.keys(bindings), ...roleNames];
  const grants = principals.length
    ? connections.map((connectionId) => ({
        connectionId,
        subjects: [r.pick(principals)] as [string],
        tools: [glob()] as [string],
        ...(r.next() < 0.4 ? { expiresAt: r.pick(['2026-01-01T00:00:00.000Z', '2026-06-01T00:00:00.000Z']) } : {}),
      }))
    : [];
  const snapshot: Snapshot = {
    tenant: { id: `t${seed}`, name: 'T' },
    policy: { roles, bindings, profiles },
    tools,
    groups,
    states: STATES.map((name) => ({ name })),
    grants,
  };
  return { snapshot, subjects: [...subjects, 'agent:nobody'], connections };
}

function randomRequest(r: ReturnType<typeof rng>, subjects: string[], connections: string[]): EvaluationRequest {
  const req: EvaluationRequest = {
    subject: r.pick(subjects),
    at: r.pick(['2025-12-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', '2026-07-01T00:00:00.000Z']),
  };
  const g = r.int(5);
  if (g === 1) req.groups = [];
  else if (g === 2) req.groups = ['*'];
  else if (g >= 3) req.groups = r.some(GROUPS, 3);
  if (r.next() < 0.6) req.state = r.pick(STATES);
  if (r.next() < 0.6) req.facts = { hostSession: r.pick(['ready', 'closed']), ...(r.next() < 0.5 ? { env: r.pick(['prod', 1, true] as const) } : {}) };
  if (r.next() < 0.3) req.profile = r.pick(['p', 'unknown']);
  if (r.next() < 0.4) req.allowedConnectionIds = r.some(connections, 2);
  return req;
}

describe('evaluate against the semantics written out longhand', () => {
  it('R6.1 R6.2 R6.3 R6.4 R6.5 R6.6 R6.7 R6.8 R6.9 R6.10 R6.11 R6.12 R6.13 R6.14 R6.15 agrees on thousands of randomized snapshots and requests', () => {
    let compared = 0;
    const reasons = new Set<string>();
    for (let seed = 1; seed <= 250; seed++) {
      const { snapshot, subjects, connections } = randomSnapshot(seed);
      const compiled = compileBundle(snapshot, { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00Z' });
      if (!compiled.ok) throw new Error(`seed ${seed} does not compile: ${JSON.stringify(compiled.errors)}`);
      const loaded = loadBundle(JSON.parse(compiled.text));
      const r = rng(seed * 7919);
      for (let q = 0; q < 40; q++) {
        const request = randomRequest(r, subjects, connections);
        const expected = referenceEvaluate(snapshot, request);
        const actual = evaluate(loaded, request);
        expect(actual, `seed ${seed}, request ${JSON.stringify(request)}`).toEqual(expected);
        for (const f of actual.filtered) reasons.add(f.reason);
        if (actual.rejected) reasons.add('group_not_permitted');
        if (actual.tools.length) reasons.add('visible');
        compared++;
      }
    }
    expect(compared).toBe(10_000);
    // Every outcome was exercised, so agreement is not vacuous.
    expect([...reasons].sort()).toEqual(
      [
        'denied',
        'disabled',
        'group',
        'group_not_permitted',
        'no_connection',
        'no_redaction',
        'no_role',
        'not_allowed',
        'profile',
        'quarantined',
        'runtime_gate',
        'state',
        'visible',
      ].sort(),
    );
  });
});
