import type { Bundle, BundleTool, ConformanceVector, EvaluationRequest } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';

/** The instant every conformance vector is evaluated at: fixed, so the vectors are part of the content. */
export const CONFORMANCE_AT = '2000-01-01T00:00:00.000Z';
const MAX_SUBJECTS = 2;

/**
 * Sample requests with the answers this bundle gives, derived from its own policy: an unbound
 * subject, a few bound subjects with default and with every permitted group (gates satisfied, a
 * profile, the granted connections), a non-initial state, a request for a group no role permits,
 * and an instant after the last grant expires. A runtime that reproduces them reads the bundle as
 * the compiler meant it.
 */
export function conformanceVectors(bundle: Bundle): ConformanceVector[] {
  const loaded = loadBundle(bundle);
  const { policy, catalog } = bundle;
  const requests: EvaluationRequest[] = [];
  const at = CONFORMANCE_AT;

  const subjects = Object.keys(policy.bindings).sort();
  let nobody = 'conformance:nobody';
  while (Object.hasOwn(policy.bindings, nobody)) nobody += '_';
  requests.push({ subject: nobody, at });

  const tools = catalog.tools.filter((t): t is BundleTool => !('excluded' in t));
  const facts: Record<string, string | number | boolean> = {};
  for (const t of tools) for (const gate of t.requires ?? []) if (!(gate.fact in facts)) facts[gate.fact] = gate.in[0];
  const profile = Object.keys(policy.profiles).sort()[0];
  const connections = [...new Set(policy.grants.map((g) => g.connectionId))].sort();
  const state = catalog.states.map((s) => s.name).find((s) => s !== 'undefined' && tools.some((t) => t.availableInStates?.includes(s)));

  // Subjects with distinct role sets say the most; take the first few.
  const seenRoleSets = new Set<string>();
  const chosen = subjects.filter((s) => {
    const k = policy.bindings[s].join('\u0000');
    if (seenRoleSets.has(k)) return false;
    seenRoleSets.add(k);
    return true;
  }).slice(0, MAX_SUBJECTS);

  for (const subject of chosen) {
    const roleGroups = [...new Set(policy.bindings[subject].flatMap((r) => policy.roles[r]?.groups ?? []))].sort();
    const permitted = roleGroups.includes('*') ? ['*'] : roleGroups;
    requests.push({ subject, at });
    const rich: EvaluationRequest = { subject, groups: permitted, at };
    if (Object.keys(facts).length > 0) rich.facts = facts;
    if (profile !== undefined) rich.profile = profile;
    if (connections.length > 0) rich.allowedConnectionIds = connections;
    requests.push(rich);
    if (state !== undefined) requests.push({ subject, groups: permitted, state, facts, at });
  }

  const narrow = subjects.find((s) => !policy.bindings[s].some((r) => policy.roles[r]?.groups.includes('*')));
  if (narrow !== undefined) {
    const permitted = new Set(loaded.bindings.get(narrow)!.flatMap((r) => [...(loaded.roles.get(r)?.groups ?? [])]));
    let outside = catalog.groups.map((g) => g.name).find((g) => !permitted.has(g));
    if (outside === undefined) {
      outside = 'conformance-unpermitted';
      while (permitted.has(outside)) outside += '-x';
    }
    requests.push({ subject: narrow, groups: [outside], at });
  }

  const expiries = policy.grants.flatMap((g) => (g.expiresAt ? [g.expiresAt] : [])).sort();
  if (expiries.length > 0 && chosen.length > 0) {
    const subject = chosen[0];
    const roleGroups = [...new Set(policy.bindings[subject].flatMap((r) => policy.roles[r]?.groups ?? []))].sort();
    requests.push({ subject, groups: roleGroups.includes('*') ? ['*'] : roleGroups, facts, at: expiries[expiries.length - 1] });
  }

  const seen = new Set<string>();
  const unique = requests.filter((r) => {
    const k = canonicalJson(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return unique.map((request) => ({ request, expect: JSON.parse(JSON.stringify(evaluate(loaded, request))) }));
}
