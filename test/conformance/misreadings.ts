// Evaluator mutants: docs/spec.md implemented longhand over the bundle JSON, the way an implementer
// in another language would, with a switch for each plausible misreading of one rule. With no
// switch it must equal the runtime (misreadings.test.ts proves it); with one, it is a mutant the
// bundle's conformance vectors have to catch whenever some request can tell it apart.
import type { Bundle, BundleTool, EvaluationRequest, EvaluationResult, FilterReason, VectorCall } from '../../policy-schemas/types.gen.ts';
import type { ConformanceSubject } from '../../runtime/conformance.ts';
import { compileInputSchema } from '../../runtime/load-bundle.ts';
import { CONSTRAINT_MISREADINGS, specConstraints } from './constraint-misreadings.ts';

export const MISREADINGS = [
  { id: 'groups-absent-all', rule: 'R6.1', what: 'absent groups read as every group' },
  { id: 'state-absent-any', rule: 'R6.1', what: 'absent state passes every state check' },
  { id: 'no-role-rejects', rule: 'R6.2', what: 'a subject without roles goes through the group permission check' },
  { id: 'no-role-after-excluded', rule: 'R6.2', what: 'excluded tools keep their own reason for a subject without roles' },
  { id: 'request-groups-unexpanded', rule: 'R6.3', what: 'requested groups not expanded through includes' },
  { id: 'expansion-one-level', rule: 'R6.3', what: 'includes followed one level only' },
  { id: 'answer-groups-requested', rule: 'R6.3', what: 'the answer lists the groups as requested' },
  { id: 'permission-single-role', rule: 'R6.4', what: 'one role must permit every requested group' },
  { id: 'permission-role-groups-raw', rule: 'R6.4', what: "roles' groups not expanded through includes" },
  { id: 'permission-narrows', rule: 'R6.4', what: 'unpermitted groups silently dropped' },
  { id: 'rejection-names-all', rule: 'R6.4', what: 'the rejection names every requested group' },
  { id: 'star-request-permitted', rule: 'R6.4', what: '"*" requested is always permitted' },
  { id: 'permission-first-role', rule: 'R6.4', what: "only the first role's groups permit" },
  { id: 'swap-excluded-group', rule: 'R6.5', what: 'group checked before the exclusion' },
  { id: 'swap-group-state', rule: 'R6.5', what: 'state checked before group' },
  { id: 'swap-state-denied', rule: 'R6.5', what: 'deny checked before the state' },
  { id: 'swap-denied-not_allowed', rule: 'R6.5', what: 'not_allowed checked before denied' },
  { id: 'swap-not_allowed-runtime_gate', rule: 'R6.5', what: 'runtime gates checked before allow' },
  { id: 'swap-runtime_gate-profile', rule: 'R6.5', what: 'profile checked before runtime gates' },
  { id: 'swap-profile-no_connection', rule: 'R6.5', what: 'connection checked before profile' },
  { id: 'excluded-as-group', rule: 'R6.6', what: 'excluded tools filtered with reason group' },
  { id: 'empty-groups-default', rule: 'R6.7', what: '`groups: []` read as the default group' },
  { id: 'tool-empty-groups-default', rule: 'R6.7', what: "a tool's `groups: []` read as the default group (as if absent)" },
  { id: 'star-request-skips-groupless', rule: 'R6.7', what: '"*" requested does not show a tool whose `groups` is empty' },
  { id: 'star-request-literal', rule: 'R6.7', what: '"*" requested matched as a group name' },
  { id: 'tool-first-group-only', rule: 'R6.7', what: "only the tool's first group counts" },
  { id: 'states-absent-initial-only', rule: 'R6.8', what: 'absent availableInStates read as ["undefined"]' },
  { id: 'allow-wins', rule: 'R6.9', what: 'an allow overrides a deny' },
  { id: 'deny-from-allowing-role-only', rule: 'R6.9', what: 'a deny counts only in a role that allows the tool' },
  { id: 'allow-first-role', rule: 'R6.10', what: "only the first role's allow counts" },
  { id: 'facts-loose', rule: 'R6.11', what: 'facts compared loosely (1 == "1" == true)' },
  { id: 'facts-as-strings', rule: 'R6.11', what: 'facts compared as strings' },
  { id: 'fact-missing-passes', rule: 'R6.11', what: 'a condition on a missing fact holds' },
  { id: 'gates-any', rule: 'R6.11', what: 'one condition holding is enough' },
  { id: 'gate-first-value', rule: 'R6.11', what: 'only the first listed value matches' },
  { id: 'profile-enable-ignored', rule: 'R6.12', what: 'enable changes nothing' },
  { id: 'unknown-profile-shows-scoped', rule: 'R6.12', what: 'an unknown profile shows profile-scoped tools' },
  { id: 'disable-any-profile', rule: 'R6.12', what: "every profile's disable applies when any profile is named" },
  { id: 'scoped-visible-without-profile', rule: 'R6.12', what: 'profile-scoped tools visible when no profile is named' },
  { id: 'grants-subject-only', rule: 'R6.13', what: 'grants matched on the subject only' },
  { id: 'grants-role-only', rule: 'R6.13', what: "grants matched on the subject's roles only" },
  { id: 'grant-expiry-inclusive', rule: 'R6.13', what: 'a grant still holds at its expiry instant' },
  { id: 'allowed-empty-as-absent', rule: 'R6.13', what: '`allowedConnectionIds: []` read as absent' },
  { id: 'allowed-ignored', rule: 'R6.13', what: 'allowedConnectionIds ignored' },
  { id: 'grant-covers-all-tools', rule: 'R6.13', what: "a grant's tool globs ignored" },
  { id: 'approval-allowing-roles-only', rule: 'R6.14', what: 'approval taken only from the roles that allow the tool' },
  { id: 'approval-first-role', rule: 'R6.14', what: 'approval taken from the first role only' },
  { id: 'approval-all-roles', rule: 'R6.14', what: 'approval only when every role asks for it' },
  { id: 'order-locale', rule: 'R6.15', what: 'tools ordered by locale collation' },
  { id: 'filtered-by-reason', rule: 'R6.15', what: 'filtered ordered by reason, then id' },
  { id: 'call-id-fresh', rule: 'R7.1', what: "the caller's toolCallId replaced" },
  { id: 'excluded-unavailable', rule: 'R7.2', what: 'an excluded tool answered as unavailable' },
  { id: 'hidden-unavailable', rule: 'R7.3', what: 'a tool not visible answered as unavailable' },
  { id: 'connection-only-when-required', rule: 'R7.4', what: 'a connectionId checked only for tools that require one' },
  { id: 'missing-connection-denied', rule: 'R7.4', what: 'a missing connectionId answered policy_denied' },
  { id: 'connection-ignores-allowed', rule: 'R7.4', what: "the request's allowedConnectionIds ignored at call time" },
  { id: 'empty-connection-absent', rule: 'R7.4', what: 'an empty connectionId read as absent' },
  { id: 'absent-arguments-invalid', rule: 'R7.5', what: 'absent arguments answered invalid_json' },
  { id: 'invalid-json-validation', rule: 'R7.5', what: 'unparsable arguments answered validation' },
  { id: 'required-pointer-parent', rule: 'R7.6', what: 'a missing property reported at its parent' },
  { id: 'approval-ignored', rule: 'R7.7', what: 'require_approval answered allow' },
  { id: 'arguments-before-connection', rule: 'R7.8', what: 'arguments checked before the connection' },
  { id: 'connection-member-ignored', rule: 'R7.10', what: 'a connectionId inside arguments the schema accepts is allowed' },
  { id: 'connection-member-top-level-only', rule: 'R7.10', what: 'only a top-level connectionId member is refused' },
  { id: 'connection-member-before-schema', rule: 'R7.8', what: 'a connectionId member in arguments checked before the schema' },
  ...CONSTRAINT_MISREADINGS,
] as const;

export type Misreading = (typeof MISREADINGS)[number]['id'];

type Answer = ReturnType<ConformanceSubject['decide']>;
const ORDER = ['excluded', 'group', 'state', 'denied', 'not_allowed', 'runtime_gate', 'profile', 'no_connection'] as const;
type Check = (typeof ORDER)[number];
const SWAPS: Partial<Record<Misreading, [Check, Check]>> = {
  'swap-excluded-group': ['excluded', 'group'],
  'swap-group-state': ['group', 'state'],
  'swap-state-denied': ['state', 'denied'],
  'swap-denied-not_allowed': ['denied', 'not_allowed'],
  'swap-not_allowed-runtime_gate': ['not_allowed', 'runtime_gate'],
  'swap-runtime_gate-profile': ['runtime_gate', 'profile'],
  'swap-profile-no_connection': ['profile', 'no_connection'],
};

/** The spec read longhand, misreading one rule (or none). */
export function misreadingSubject(bundle: Bundle, m: Misreading | null): ConformanceSubject {
  return {
    evaluate: (request) => specEvaluate(bundle, request, m),
    decide: (request, call) => specDecide(bundle, request, call, m),
  };
}

type Prepared = {
  /** Per group: itself and every group it includes, transitively, sorted (R2.4). */
  closures: Map<string, string[]>;
  roles: Map<string, { groups: string[]; allow: Set<string>; deny: Set<string> }>;
  scopedSet: Set<string>;
  /** Per grant, in policy order: the catalog ids its globs match. */
  grantTools: Set<string>[];
  tools: Map<string, BundleTool>;
};
const preparedBundles = new WeakMap<Bundle, Prepared>();

/** A glob as R2.4 says: `*` matches any run of characters, every other character itself. */
function globRegExp(glob: string): RegExp {
  const parts = glob.split('*').map((part) => part.replace(/[\\^$.*+?()[\]{}|-]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`);
}

// What a v2 bundle leaves to the runtime, derived longhand once per bundle (R2.4): closures,
// glob expansions, profile scoping, and each tool with its defaults (R2.2) and schema (R2.6).
function prepared(bundle: Bundle): Prepared {
  let p = preparedBundles.get(bundle);
  if (!p) {
    const ids = bundle.catalog.tools.map((t) => t.id);
    const matching = (globs: readonly string[] | undefined) => {
      const res = (globs ?? []).map(globRegExp);
      return new Set(ids.filter((id) => res.some((re) => re.test(id))));
    };
    const includes = new Map(bundle.catalog.groups.map((g) => [g.name, g.includes ?? []]));
    const closures = new Map<string, string[]>();
    for (const name of includes.keys()) {
      const seen = new Set([name]);
      const todo = [name];
      while (todo.length > 0) for (const next of includes.get(todo.pop()!) ?? []) if (!seen.has(next)) seen.add(next), todo.push(next);
      closures.set(name, [...seen].sort());
    }
    const roles = new Map(
      Object.entries(bundle.policy.roles ?? {}).map(([name, role]) => {
        const raw = role.groups ?? [];
        const groups = raw.includes('*') ? ['*'] : [...new Set(raw.flatMap((g) => closures.get(g) ?? [g]))].sort();
        return [name, { groups, allow: matching(role.allow), deny: matching(role.deny) }];
      }),
    );
    const profiles = Object.values(bundle.policy.profiles ?? {});
    const tools = new Map<string, BundleTool>();
    for (const t of bundle.catalog.tools) {
      if ('excluded' in t) continue;
      const inputSchema = t.inputSchemaRef === undefined ? t.inputSchema : bundle.catalog.schemas?.[t.inputSchemaRef];
      tools.set(t.id, { ...t, inputSchema, groups: t.groups ?? ['default'], requiresConnection: t.requiresConnection === true });
    }
    p = {
      closures,
      roles,
      scopedSet: new Set(ids.filter((id) => profiles.some((pr) => (pr.enable ?? []).includes(id)))),
      grantTools: (bundle.policy.grants ?? []).map((g) => matching(g.tools)),
      tools,
    };
    preparedBundles.set(bundle, p);
  }
  return p;
}

function own<T>(o: Record<string, T> | undefined, k: string): T | undefined {
  return o !== undefined && Object.hasOwn(o, k) ? o[k] : undefined;
}

function specEvaluate(bundle: Bundle, r: EvaluationRequest, m: Misreading | null): EvaluationResult {
  const { catalog, policy } = bundle;
  const ix = prepared(bundle);
  const closure = (g: string): string[] => {
    if (m === 'expansion-one-level') return [g, ...(catalog.groups.find((x) => x.name === g)?.includes ?? [])];
    return ix.closures.get(g) ?? [g];
  };
  const roles = own(policy.bindings, r.subject) ?? [];
  let requested = r.groups ?? (m === 'groups-absent-all' ? ['*'] : ['default']);
  if (m === 'empty-groups-default' && r.groups?.length === 0) requested = ['default'];
  const state = r.state ?? 'undefined';
  const expandedOf = (gs: readonly string[]) => [...new Set(gs.flatMap((g) => (m === 'request-groups-unexpanded' ? [g] : closure(g))))].sort();
  const answerGroups = (gs: readonly string[]) => (m === 'answer-groups-requested' ? [...gs] : expandedOf(gs));
  const byCode = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

  if (roles.length === 0 && m !== 'no-role-rejects') {
    return {
      roles: [],
      groups: answerGroups(requested),
      state,
      tools: [],
      filtered: catalog.tools.map((t) => ({ id: t.id, reason: m === 'no-role-after-excluded' && 'excluded' in t ? t.excluded : ('no_role' as FilterReason) })),
    };
  }
  const permittedBy = (role: string): Set<string> | '*' => {
    const raw = own(policy.roles, role)?.groups ?? [];
    if (raw.includes('*')) return '*';
    return new Set(m === 'permission-role-groups-raw' ? raw : (ix.roles.get(role)?.groups ?? []));
  };
  const sets = (m === 'permission-first-role' ? roles.slice(0, 1) : roles).map(permittedBy);
  const ok = (g: string) => (m === 'star-request-permitted' && g === '*') || sets.some((s) => s === '*' || s.has(g));
  let refused = [...new Set(requested.filter((g) => !ok(g)))];
  if (m === 'permission-single-role' && refused.length === 0 && !sets.some((s) => s === '*' || requested.every((g) => s.has(g))))
    refused = [...new Set(requested)];
  if (refused.length > 0 && m === 'permission-narrows') {
    requested = requested.filter((g) => ok(g));
    refused = [];
  }
  if (refused.length > 0 || roles.length === 0) {
    return {
      roles: [...roles],
      groups: answerGroups(requested),
      state,
      tools: [],
      filtered: [],
      rejected: { reason: 'group_not_permitted', groups: m === 'rejection-names-all' ? [...new Set(requested)] : refused },
    };
  }
  const expanded = new Set(expandedOf(requested));
  const allGroups = expanded.has('*') && m !== 'star-request-literal';
  const roleIx = roles.map((name) => ({ name, ix: ix.roles.get(name)!, role: own(policy.roles, name)! }));
  const at = r.at !== undefined ? Date.parse(r.at) : Date.now();
  const facts = r.facts ?? {};
  const profileName = r.profile;
  const profile = profileName === undefined ? undefined : own(policy.profiles, profileName);
  const { scopedSet, grantTools } = ix;
  const profiles = Object.values(policy.profiles ?? {});
  const principals = new Set(m === 'grants-subject-only' ? [r.subject] : m === 'grants-role-only' ? roles : [r.subject, ...roles]);
  const allowedIds = m === 'allowed-ignored' || (m === 'allowed-empty-as-absent' && r.allowedConnectionIds?.length === 0) ? undefined : r.allowedConnectionIds;
  // biome-ignore lint/suspicious/noDoubleEquals: the facts-loose misreading is loose equality on purpose
  const equal = (a: unknown, b: unknown) => (m === 'facts-loose' ? a == b : m === 'facts-as-strings' ? String(a) === String(b) : a === b);

  const fails = (t: Bundle['catalog']['tools'][number], check: Check): FilterReason | null => {
    const def = 'excluded' in t ? null : ix.tools.get(t.id)!;
    switch (check) {
      case 'excluded':
        if (!('excluded' in t)) return null;
        return m === 'excluded-as-group' && !allGroups ? 'group' : t.excluded;
      case 'group': {
        let groups = def?.groups ?? [];
        if (m === 'tool-empty-groups-default' && groups.length === 0) groups = ['default'];
        if (allGroups) return m === 'star-request-skips-groupless' && groups.length === 0 ? 'group' : null;
        const considered = m === 'tool-first-group-only' ? groups.slice(0, 1) : groups;
        return considered.some((g) => expanded.has(g)) ? null : 'group';
      }
      case 'state': {
        const states = def?.availableInStates;
        if (m === 'state-absent-any' && r.state === undefined) return null;
        if (states === undefined) return m === 'states-absent-initial-only' && state !== 'undefined' ? 'state' : null;
        return states.includes(state) ? null : 'state';
      }
      case 'denied': {
        const denies = roleIx.filter(({ ix }) => ix.deny.has(t.id));
        if (m === 'allow-wins' && roleIx.some(({ ix }) => ix.allow.has(t.id))) return null;
        if (m === 'deny-from-allowing-role-only') {
          const allowing = roleIx.filter(({ ix }) => ix.allow.has(t.id));
          if (allowing.some(({ ix }) => !ix.deny.has(t.id))) return null;
          return allowing.length > 0 ? 'denied' : null;
        }
        return denies.length > 0 ? 'denied' : null;
      }
      case 'not_allowed': {
        const considered = m === 'allow-first-role' ? roleIx.slice(0, 1) : roleIx;
        return considered.some(({ ix }) => ix.allow.has(t.id)) ? null : 'not_allowed';
      }
      case 'runtime_gate': {
        const gates = def?.requires ?? [];
        if (gates.length === 0) return null;
        const holds = (g: (typeof gates)[number]) => {
          if (!Object.hasOwn(facts, g.fact)) return m === 'fact-missing-passes';
          const values = m === 'gate-first-value' ? g.in.slice(0, 1) : g.in;
          return values.some((v) => equal(facts[g.fact], v));
        };
        return (m === 'gates-any' ? gates.some(holds) : gates.every(holds)) ? null : 'runtime_gate';
      }
      case 'profile': {
        const scoped = m !== 'profile-enable-ignored' && scopedSet.has(t.id);
        if (profile === undefined) {
          if (profileName !== undefined && m === 'unknown-profile-shows-scoped') return null;
          if (m === 'disable-any-profile' && profileName !== undefined && profiles.some((p) => (p.disable ?? []).includes(t.id))) return 'profile';
          return scoped && m !== 'scoped-visible-without-profile' ? 'profile' : null;
        }
        if (m === 'disable-any-profile' && profiles.some((p) => (p.disable ?? []).includes(t.id))) return 'profile';
        if ((profile.disable ?? []).includes(t.id)) return 'profile';
        return scoped && !(profile.enable ?? []).includes(t.id) ? 'profile' : null;
      }
      case 'no_connection': {
        if (!def?.requiresConnection) return null;
        return (policy.grants ?? []).some(
          (g, i) =>
            g.subjects.some((s) => principals.has(s)) &&
            (m === 'grant-covers-all-tools' || grantTools[i].has(t.id)) &&
            (g.expiresAt === undefined || (m === 'grant-expiry-inclusive' ? at <= Date.parse(g.expiresAt) : at < Date.parse(g.expiresAt))) &&
            (allowedIds === undefined || allowedIds.includes(g.connectionId)),
        )
          ? null
          : 'no_connection';
      }
    }
  };
  const order: Check[] = [...ORDER];
  const swap = m === null ? undefined : SWAPS[m];
  if (swap) {
    const [a, b] = [order.indexOf(swap[0]), order.indexOf(swap[1])];
    [order[a], order[b]] = [order[b], order[a]];
  }
  const approvalRoles = roleIx.filter((_, i) => m !== 'approval-first-role' || i === 0);
  const tools: EvaluationResult['tools'] = [];
  const filtered: EvaluationResult['filtered'] = [];
  for (const t of catalog.tools) {
    let reason: FilterReason | null = null;
    for (const c of order) if ((reason = fails(t, c)) !== null) break;
    if (reason !== null) {
      filtered.push({ id: t.id, reason });
      continue;
    }
    const effect = (t as BundleTool).effect;
    const asking = approvalRoles.filter(
      ({ role, ix: rix }) => (role.requireApproval ?? []).includes(effect) && (m !== 'approval-allowing-roles-only' || rix.allow.has(t.id)),
    );
    const approval = m === 'approval-all-roles' ? asking.length === roleIx.length : asking.length > 0;
    // R6.16: the constraints of the subject's roles whose globs match the tool, roles in order, then index.
    const constraints = roleIx.flatMap(({ name, role }) =>
      (role.constraints ?? []).flatMap((c, index) =>
        c.tools.some((glob) => globRegExp(glob).test(t.id)) ? [{ role: name, index, otherwise: c.otherwise, reason: c.reason ?? '' }] : [],
      ),
    );
    const decision = approval ? 'require_approval' : 'allow';
    tools.push(constraints.length > 0 ? { id: t.id, decision, constraints } : { id: t.id, decision });
  }
  if (m === 'order-locale') tools.sort((a, b) => a.id.localeCompare(b.id));
  if (m === 'filtered-by-reason') filtered.sort((a, b) => byCode(a.reason, b.reason) || byCode(a.id, b.id));
  return { roles: [...roles], groups: answerGroups(requested), state, tools, filtered };
}

function specDecide(bundle: Bundle, r: EvaluationRequest, call: VectorCall, m: Misreading | null): Answer {
  const toolCallId = m === 'call-id-fresh' ? 'fresh-id' : (call.toolCallId ?? globalThis.crypto.randomUUID());
  const deny = (errorCode: NonNullable<Answer['errorCode']>): Answer => ({ toolCallId, decision: 'deny', errorCode });
  const entry = bundle.catalog.tools.find((t) => t.id === call.name);
  if (!entry) return deny('unavailable');
  if (m === 'excluded-unavailable' && 'excluded' in entry) return deny('unavailable');
  const evaluation = specEvaluate(bundle, r, null);
  const seen = evaluation.tools.find((t) => t.id === call.name);
  if (!seen) return deny(m === 'hidden-unavailable' ? 'unavailable' : 'policy_denied');
  const tool = prepared(bundle).tools.get(entry.id)!;

  const connection = (): Answer | null => {
    const given = m === 'empty-connection-absent' && call.connectionId === '' ? undefined : call.connectionId;
    if (given === undefined && !tool.requiresConnection) return null;
    if (m === 'connection-only-when-required' && !tool.requiresConnection) return null;
    if (given === undefined || given === '') return deny(m === 'missing-connection-denied' ? 'policy_denied' : 'validation');
    const roles = own(bundle.policy.bindings, r.subject) ?? [];
    const at = r.at !== undefined ? Date.parse(r.at) : Date.now();
    const allowed = m === 'connection-ignores-allowed' ? undefined : r.allowedConnectionIds;
    const ok = (bundle.policy.grants ?? []).some(
      (g, i) =>
        g.connectionId === given &&
        g.subjects.some((s) => s === r.subject || roles.includes(s)) &&
        prepared(bundle).grantTools[i].has(tool.id) &&
        (g.expiresAt === undefined || at < Date.parse(g.expiresAt)) &&
        (allowed === undefined || allowed.includes(g.connectionId)),
    );
    return ok ? null : deny('policy_denied');
  };
  const argumentsCheck = (): Answer | null => {
    let args: unknown;
    if (call.arguments === undefined) {
      if (m === 'absent-arguments-invalid') return deny('invalid_json');
      args = {};
    } else {
      try {
        args = JSON.parse(call.arguments);
      } catch {
        return deny(m === 'invalid-json-validation' ? 'validation' : 'invalid_json');
      }
    }
    // R7.11 after R7.6 and R7.10 (constraint-misreadings.ts).
    const constraints = (): Answer | null => {
      const outcome = specConstraints(bundle, own(bundle.policy.bindings, r.subject) ?? [], tool.id, args, m);
      return outcome === null ? null : outcome === 'deny' ? deny('policy_denied') : { toolCallId, decision: 'require_approval' };
    };
    if (m === 'constraint-before-schema') {
      const early = constraints();
      if (early) return early;
    }
    if (m === 'connection-member-before-schema') {
      const refusal = connectionMembers(args);
      if (refusal) return refusal;
    }
    const validate = compileInputSchema(tool.inputSchema as Record<string, unknown>);
    if (validate(args)) return connectionMembers(args) ?? constraints();
    const errors = (validate.errors ?? []).map((e) => {
      if (e.keyword === 'required' && m !== 'required-pointer-parent')
        return { pointer: `${e.instancePath}/${(e.params as { missingProperty: string }).missingProperty}`, message: 'is required' };
      if (e.keyword === 'additionalProperties')
        return { pointer: `${e.instancePath}/${(e.params as { additionalProperty: string }).additionalProperty}`, message: 'is not a known field' };
      return { pointer: e.instancePath, message: e.message ?? 'is invalid' };
    });
    return { toolCallId, decision: 'deny', errorCode: 'validation', errors };
  };
  // R7.10, after the schema accepted the arguments: one pointer per connectionId member.
  const connectionMembers = (args: unknown): Answer | null => {
    if (m === 'connection-member-ignored') return null;
    const pointers: string[] = [];
    const walk = (node: unknown, pointer: string, exact: boolean, depth: number): void => {
      if (typeof node !== 'object' || node === null || (m === 'connection-member-top-level-only' && depth > 0)) return;
      if (Array.isArray(node)) {
        node.forEach((v, i) => walk(v, exact ? `${pointer}/${i}` : pointer, exact, depth + 1));
        return;
      }
      for (const [key, v] of Object.entries(node)) {
        if (key === 'connectionId') {
          const at = exact ? `${pointer}/connectionId` : pointer;
          if (!pointers.includes(at)) pointers.push(at);
          continue;
        }
        const plain = exact && /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/.test(key);
        walk(v, plain ? `${pointer}/${key}` : pointer, plain, depth + 1);
      }
    };
    walk(args, '', true, 0);
    if (pointers.length === 0) return null;
    return { toolCallId, decision: 'deny', errorCode: 'validation', errors: pointers.map((pointer) => ({ pointer, message: 'is not allowed' })) };
  };
  const steps = m === 'arguments-before-connection' ? [argumentsCheck, connection] : [connection, argumentsCheck];
  for (const step of steps) {
    const refusal = step();
    if (refusal) return refusal;
  }
  return { toolCallId, decision: seen.decision === 'require_approval' && m !== 'approval-ignored' ? 'require_approval' : 'allow' };
}
