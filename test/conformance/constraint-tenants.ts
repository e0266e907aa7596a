// Argument constraints for the randomized conformance tenants, drawn from a generator of their
// own (seeded from the tenant's seed) so that adding them changes nothing else a tenant holds.
import type { ArgumentConstraint, Bundle, EvaluationRequest, VectorCall } from '../../policy-schemas/types.gen.ts';
import { CONFORMANCE_AT } from '../../server/compiler/conformance.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';
import { type Rng, rng } from '../support/seeded-random.ts';

// Over the randomized tenants' input schemas (`q` a short string, `n` an integer, or anything).
const ARGUMENT_SCHEMAS: Record<string, unknown>[] = [
  { properties: { q: { type: 'string', pattern: '^ok' } } },
  { properties: { n: { maximum: 5 } } },
  { required: ['q'] },
  { properties: { q: { maxLength: 2 } } },
  { properties: { n: { type: 'integer', minimum: 0 } } },
];

/** The snapshot with constraints on some of its roles: globs and exact ids, deny and require_approval, one to three per role. */
export function withConstraints(snapshot: Snapshot, seed: number): Snapshot {
  const r = rng(seed * 31 + 7);
  const ids = (snapshot.tools ?? []).filter((t) => t.status !== 'removed').map((t) => t.id);
  const roles = structuredClone(snapshot.policy?.roles ?? {});
  if (ids.length === 0 || !r.chance(0.8)) return snapshot;
  for (const role of Object.values(roles)) {
    if (!r.chance(0.85)) continue;
    role.constraints = Array.from({ length: 1 + r.int(3) }, (): ArgumentConstraint => {
      const id = r.pick(ids);
      const ns = id.slice(0, id.indexOf('__') + 2);
      return {
        tools: [r.pick([id, `${ns}*`, `${id.slice(0, 1 + r.int(id.length - 1))}*`, '*'])],
        otherwise: r.pick(['deny', 'require_approval'] as const),
        arguments: r.pick(ARGUMENT_SCHEMAS),
        reason: 'randomized constraint',
      };
    });
  }
  // Now and then an approval constraint ahead of a deny one that the same arguments fail (`{"n":9}`): deny must still win.
  const first = Object.values(roles)[0];
  if (first && r.chance(0.4)) {
    first.constraints = [
      { tools: ['*'], otherwise: 'require_approval', arguments: { required: ['q'] }, reason: 'randomized approval first' },
      ...(first.constraints ?? []),
      { tools: ['*'], otherwise: 'deny', arguments: { properties: { n: { maximum: 5 } } }, reason: 'randomized deny last' },
    ];
  }
  return { ...snapshot, policy: { ...snapshot.policy, roles } };
}

/** A request under which a bound subject likely sees many tools: every group its roles permit, gates met. */
export function randomConstraintRequest(r: Rng, bundle: Bundle): EvaluationRequest {
  const bindings = bundle.policy.bindings ?? {};
  const subjects = Object.keys(bindings);
  const subject = subjects.length > 0 ? r.pick(subjects) : 'agent:nobody';
  const roles = bindings[subject] ?? [];
  const permitted = roles.flatMap((role) => bundle.policy.roles?.[role]?.groups ?? []);
  const request: EvaluationRequest = { subject, groups: permitted.includes('*') ? ['*'] : [...new Set(permitted)], at: CONFORMANCE_AT };
  const facts: Record<string, string | number | boolean> = {};
  for (const t of bundle.catalog.tools) for (const gate of 'requires' in t ? (t.requires ?? []) : []) facts[gate.fact] ??= gate.in[0];
  if (Object.keys(facts).length > 0) request.facts = facts;
  return request;
}

/** A call with arguments that meet or fail the constraints above, on the bundle's tools. */
export function randomConstraintCall(r: Rng, bundle: Bundle): VectorCall {
  const call: VectorCall = { toolCallId: 'call-c', name: r.pick(bundle.catalog.tools).id };
  call.arguments = r.pick([
    '{}',
    '{"q":"ok"}',
    '{"q":"okay"}',
    '{"q":"no"}',
    '{"n":9}',
    '{"n":-1}',
    '{"n":1}',
    '{"q":"ok","n":9}',
    '{"q":"no","n":9}',
    '{"q":"nope","n":-1}',
    '{"q":"ok","extra":1}',
    '{"q":1}',
    '{"n":"x"}',
    '{"q":"okay!"}',
  ]);
  const granted = (bundle.policy.grants ?? []).map((c) => c.connectionId);
  if (granted.length > 0 && r.chance(0.5)) call.connectionId = r.pick(granted);
  return call;
}
