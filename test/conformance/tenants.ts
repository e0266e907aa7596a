// Randomized tenants and requests for the conformance tests: seeded, so a failure names a
// reproducible seed, and shaped so that every rule of docs/spec.md has a chance to matter.
import type { Bundle, ConnectionGrant, EvaluationRequest, Group, TenantPolicy, Tool, VectorCall } from '../../policy-schemas/types.gen.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';
import { CONFORMANCE_AT } from '../../server/compiler/conformance.ts';
import { type Rng, rng } from '../support/seeded-random.ts';
import { withConstraints } from './constraint-tenants.ts';

export { type Rng, rng };

const GROUPS = ['default', 'g1', 'g2', 'g3', 'g4'];
const STATES = ['undefined', 's1', 's2'];
const NAMES = ['alpha', 'Beta', 'get_x', 'getX', 'read', 'Zed', 'run-1', 'run_2', 'x'];
const GATE_VALUES: Record<string, (string | number | boolean)[]> = { hostSession: ['ready', 'closed'], env: ['prod', 1, true, '1', 'true', 0] };
const SCHEMAS = [
  { type: 'object' },
  { type: 'object', additionalProperties: false, required: ['q'], properties: { q: { type: 'string', maxLength: 5 } } },
  { type: 'object', properties: { n: { type: 'integer' } } },
];

/** A tenant with several roles per subject, includes two deep, gates, profiles and expiring grants. */
export function randomTenant(seed: number): Snapshot {
  const r = rng(seed);
  const ids = [...new Set(Array.from({ length: 5 + r.int(12) }, () => `${r.pick(['core', 'mcp__a', 'host'])}__${r.pick(NAMES)}`))];
  const tools: Tool[] = ids.map((id) => {
    const gates = r.chance(0.35)
      ? r.some(Object.keys(GATE_VALUES), 2).map((fact) => ({
          fact,
          in: r
            .some(GATE_VALUES[fact], 2)
            .concat(GATE_VALUES[fact][0])
            .filter((v, i, a) => a.indexOf(v) === i) as [string | number | boolean],
        }))
      : [];
    return {
      id,
      description: id,
      inputSchema: r.pick(SCHEMAS),
      effect: r.pick(['read_only', 'state_change', 'external_side_effect'] as const),
      ...(r.chance(0.9) ? { redaction: { allow: ['ok'] } } : {}),
      ...(r.chance(0.85)
        ? {
            groups: r
              .some(GROUPS, 2)
              .concat(r.chance(0.5) ? ['default'] : [])
              .filter((g, i, a) => a.indexOf(g) === i),
          }
        : {}),
      ...(r.chance(0.4)
        ? {
            availableInStates: r.chance(0.25)
              ? ['*']
              : r
                  .some(STATES, 2)
                  .concat(['s1'])
                  .filter((s, i, a) => a.indexOf(s) === i),
          }
        : {}),
      ...(gates.length > 0 ? { requires: gates } : {}),
      ...(r.chance(0.3) ? { requiresConnection: true } : {}),
      status: r.pick(['active', 'active', 'active', 'active', 'active', 'quarantined', 'disabled', 'removed'] as const),
    };
  });
  const groups: Group[] = [
    { name: 'default', includes: r.chance(0.3) ? ['g4'] : [] },
    { name: 'g1', includes: r.chance(0.6) ? ['g2'] : [] },
    { name: 'g2', includes: r.chance(0.6) ? ['g3'] : [] },
    { name: 'g3', includes: [] },
    { name: 'g4', includes: [] },
  ];
  const glob = () => {
    const id = r.pick(ids);
    return r.pick([id, id, `${id.slice(0, 1 + r.int(id.length))}*`, `*${r.pick(NAMES)}`, '*', `${r.pick(['core', 'host', 'mcp__a'])}__*`]);
  };
  const roleNames = ['r1', 'r2', 'r3'].slice(0, 1 + r.int(3));
  const roles: NonNullable<TenantPolicy['roles']> = Object.fromEntries(
    roleNames.map((n) => [
      n,
      {
        groups: r.chance(0.2) ? ['*'] : r.some(GROUPS, 3),
        allow: [...new Set(Array.from({ length: 1 + r.int(3) }, glob))],
        deny: [...new Set(Array.from({ length: r.int(2) }, glob))],
        requireApproval: r.some(['read_only', 'state_change', 'external_side_effect'] as const, 2),
      },
    ]),
  );
  const subjects = ['agent:a', 'agent:b', 'agent:c', 'agent:d'];
  const bindings = Object.fromEntries(subjects.filter(() => r.chance(0.85)).map((s) => [s, r.some(roleNames, 3)]));
  const profiles: NonNullable<TenantPolicy['profiles']> = {};
  for (const p of ['openai', 'anthropic']) {
    if (!r.chance(0.7)) continue;
    const enable = r.some(ids, 2);
    profiles[p] = { enable, disable: r.some(ids, 2).filter((id) => !enable.includes(id)) };
  }
  const principals = [...Object.keys(bindings), ...roleNames];
  const grants: ConnectionGrant[] = principals.length
    ? ['c1', 'c2', 'c3'].slice(0, r.int(4)).map((connectionId) => ({
        connectionId,
        subjects: r
          .some(principals, 2)
          .concat(r.pick(principals))
          .filter((s, i, a) => a.indexOf(s) === i) as [string],
        tools: [glob()] as [string],
        ...(r.chance(0.4) ? { expiresAt: r.pick(['2026-01-01T00:00:00.000Z', '2026-06-01T00:00:00.000Z']) } : {}),
      }))
    : [];
  return withConstraints(
    {
      tenant: { id: `t${seed}`, name: 'T' },
      policy: { roles, bindings, profiles },
      tools,
      groups,
      states: STATES.map((name) => ({ name })),
      grants,
    },
    seed,
  );
}

/** A request drawn from the bundle's own names, with the values a misreading would confuse. */
export function randomRequest(r: Rng, bundle: Bundle): EvaluationRequest {
  const subjects = [...Object.keys(bundle.policy.bindings ?? {}), 'agent:nobody'];
  const groups = [...bundle.catalog.groups.map((g) => g.name), 'zz-unknown'];
  const states = [...bundle.catalog.states.map((s) => s.name), 'zz-state'];
  const req: EvaluationRequest = { subject: r.pick(subjects) };
  const g = r.int(6);
  if (g === 1) req.groups = [];
  else if (g === 2) req.groups = ['*'];
  else if (g >= 3)
    req.groups = r
      .some(groups, 3)
      .concat(r.pick(groups))
      .filter((x, i, a) => a.indexOf(x) === i);
  if (r.chance(0.6)) req.state = r.pick(states);
  const gates = bundle.catalog.tools.flatMap((t) => ('requires' in t ? (t.requires ?? []) : []));
  if (gates.length > 0 && r.chance(0.7)) {
    const facts: Record<string, string | number | boolean> = {};
    for (const gate of gates) {
      if (!r.chance(0.8)) continue;
      const v = r.pick(gate.in);
      facts[gate.fact] = r.chance(0.5) ? v : r.pick([String(v), Number(v), v === 1 || v === '1' || v === 'true', 'other'].filter((x) => !Number.isNaN(x)));
    }
    req.facts = facts;
  }
  const profiles = Object.keys(bundle.policy.profiles ?? {});
  if (r.chance(0.5)) req.profile = r.pick([...profiles, ...profiles, 'zz-profile']);
  const connections = (bundle.policy.grants ?? []).map((c) => c.connectionId);
  if (r.chance(0.4)) req.allowedConnectionIds = r.chance(0.3) ? [] : r.some([...connections, 'zz-conn'], 2);
  const expiries = (bundle.policy.grants ?? []).flatMap((c) => (c.expiresAt ? [Date.parse(c.expiresAt)] : []));
  req.at = expiries.length > 0 && r.chance(0.5) ? new Date(r.pick(expiries) + r.pick([-1, 0, 1])).toISOString() : CONFORMANCE_AT;
  return req;
}

/** A tool call on the bundle's tools with arguments and connections of every kind. */
export function randomCall(r: Rng, bundle: Bundle): VectorCall {
  const call: VectorCall = { toolCallId: 'call-1', name: r.chance(0.9) ? r.pick(bundle.catalog.tools).id : 'zz__none' };
  const args = r.pick([
    undefined,
    '{',
    '{}',
    '{"q":"ok"}',
    '{"q":1}',
    '{"q":"ok","extra":1}',
    '[]',
    '{"n":1}',
    '{"n":"x"}',
    '{"connectionId":"c1"}',
    '{"n":1,"more":[{"connectionId":"c1"}]}',
    '{"n":"x","connectionId":"c1"}',
  ]);
  if (args !== undefined) call.arguments = args;
  const granted = (bundle.policy.grants ?? []).map((c) => c.connectionId);
  if (r.chance(0.6)) call.connectionId = r.pick(['', 'zz-conn', ...granted, ...granted]);
  return call;
}
