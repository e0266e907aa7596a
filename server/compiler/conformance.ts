import type { ErrorObject } from 'ajv';
import type { Bundle, DecideVector, EvaluateExpectation, EvaluateVector, EvaluationRequest, RuntimeGate, VectorCall } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { CONFORMANCE_AT } from '../../runtime/conformance.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { evaluate, evaluateTools, evaluationOutline, subjectInfo } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { EvaluationOutline } from '../../runtime/evaluate.ts';
import type { LoadedBundle, LoadedRole, LoadedTool } from '../../runtime/load-bundle.ts';
import { ANNOTATION_KEYWORDS, keywordsCompilingUnseen } from '../validation/input-schema.ts';
import { judgedSchemaProblems } from '../validation/judged-schemas.ts';
import { argumentsClearOfConstraints, constraintVectors } from './constraint-vectors.ts';

// The instant every conformance vector is evaluated at unless it names another: fixed, so the
// vectors are part of the content (runtime/conformance.ts, R12.4).
export { CONFORMANCE_AT } from '../../runtime/conformance.ts';
const AT_MS = Date.parse(CONFORMANCE_AT);

type Vector = EvaluateVector | DecideVector;
type Fact = string | number | boolean;
/** The per-tool checks of docs/spec.md R6.5, in order. */
const CHECKS = ['excluded', 'group', 'state', 'denied', 'not_allowed', 'runtime_gate', 'profile', 'no_connection'] as const;
type Check = (typeof CHECKS)[number];
const CHECK_RULE: Record<Check, string> = {
  excluded: 'R6.6',
  group: 'R6.7',
  state: 'R6.8',
  denied: 'R6.9',
  not_allowed: 'R6.10',
  runtime_gate: 'R6.11',
  profile: 'R6.12',
  no_connection: 'R6.13',
};
type Want = Partial<Record<Check, boolean>>; // true: the check must pass; false: it must fail.
type Fragment = Omit<EvaluationRequest, 'subject'>;

/** What one subject is, as far as choosing vectors goes. */
type Who = {
  subject: string;
  roles: readonly string[];
  anyGroup: boolean;
  permitted: ReadonlySet<string>;
  /** Per tool position: 1 when some role allows, 1 when some role denies. */
  allowed: Uint8Array;
  denied: Uint8Array;
};

/**
 * Vectors chosen from the tenant's own data so that they tell the rules of docs/spec.md apart
 * (DESIGN "Conformance vectors and the spec"): for each rule some request on this tenant could
 * observe, a request whose answer depends on that rule, with the expectation pinned on the
 * tools it decides (partial expectations keep large tenants' bundles small), and `decide` calls
 * for each reachable outcome. Expectations come from the runtime's own evaluate and decide.
 */
export function conformanceVectors(bundle: Bundle, findings: SchemaFindings = new SchemaFindings()): Vector[] {
  // Only the few tools that decide vectors call need a compiled input schema (compiling costs
  // milliseconds a distinct schema); the compiler has judged every schema without compiling it.
  const loaded = loadBundle(bundle, { inputValidators: 'on-first-use' });
  const chooser = new VectorChooser(loaded, bundle, findings);
  chooser.chooseAll();
  return compactVectors([...chooser.vectors(), ...constraintVectors(loaded, bundle, CONFORMANCE_AT)]);
}

/**
 * The vectors as written into the bundle, each fact once (they are to stay a tenth of a 200-tool
 * bundle's bytes): a request at the conformance instant leaves `at` out (R12.4); an evaluate
 * expectation that pins tools leaves out `rejected: false` (a rejected answer lists no tool, so a
 * pinned tool already fails it); and evaluate vectors with one request become one vector, their
 * rules and expectations together (one answer meets both or fails one of them).
 */
export function compactVectors(vectors: readonly Vector[]): Vector[] {
  const out: Vector[] = [];
  const merged = new Map<string, EvaluateVector>();
  for (const v of vectors) {
    const request = { ...v.request };
    if (request.at === CONFORMANCE_AT) delete request.at;
    if ('call' in v) {
      out.push({ ...v, request });
      continue;
    }
    const expect = { ...v.expect };
    const pinsTools = Object.keys(expect.hidden ?? {}).length + Object.keys(expect.decisions ?? {}).length + Object.keys(expect.constraints ?? {}).length > 0;
    if (expect.rejected === false && pinsTools) delete expect.rejected;
    const key = canonicalJson(request);
    const into = merged.get(key);
    if (into !== undefined && mergeable(into.expect, expect)) {
      into.rules = [...new Set([...into.rules, ...v.rules])];
      Object.assign(into.expect, expect, {
        ...(into.expect.hidden || expect.hidden ? { hidden: { ...into.expect.hidden, ...expect.hidden } } : {}),
        ...(into.expect.decisions || expect.decisions ? { decisions: { ...into.expect.decisions, ...expect.decisions } } : {}),
        ...(into.expect.constraints || expect.constraints ? { constraints: { ...into.expect.constraints, ...expect.constraints } } : {}),
      });
      continue;
    }
    const vector: EvaluateVector = { rules: [...v.rules], request, expect };
    if (into === undefined) merged.set(key, vector);
    out.push(vector);
  }
  return out;
}

/** Two expectations of one answer join unless either lists tools in order or counts them. */
function mergeable(a: EvaluateExpectation, b: EvaluateExpectation): boolean {
  const lists = (e: EvaluateExpectation) => e.visible !== undefined || e.filteredOrder !== undefined || e.visibleCount !== undefined;
  return !lists(a) && !lists(b);
}

class VectorChooser {
  private readonly out: Vector[] = [];
  private readonly seen = new Set<string>();
  private readonly who: Who[];
  private readonly live: LoadedTool[];
  private readonly nobody: string;
  private readonly groupNames: string[];
  private readonly stateNames: string[];
  private readonly profileNames: string[];
  private readonly unknownProfile: string;
  private callCount = 0;
  private readonly disabledSomewhere: ReadonlySet<string>;
  private readonly enabledSomewhere: ReadonlySet<string>;
  private factsMet: Record<string, Fact> | undefined;
  private inLocaleOrder: boolean | undefined;
  private toolBits: Uint8Array | undefined;

  constructor(
    private readonly loaded: LoadedBundle,
    private readonly bundle: Bundle,
    private readonly findings: SchemaFindings,
  ) {
    const bindings = bundle.policy.bindings ?? {};
    this.nobody = fresh('nobody', (s) => Object.hasOwn(bindings, s));
    // One subject per distinct role set and own grants says as much as all of them.
    const roleSets = new Set<string>();
    const ownGrants = (s: string) => (bundle.policy.grants ?? []).filter((g) => g.subjects.includes(s)).map((g) => g.connectionId);
    this.who = Object.keys(bindings)
      .sort()
      .filter((s) => {
        const k = [...bindings[s], '\u0001', ...ownGrants(s)].join('\u0000');
        if (roleSets.has(k) || bindings[s].length === 0) return false;
        roleSets.add(k);
        return true;
      })
      .map((s) => this.describe(s));
    this.live = loaded.tools.filter((t) => t.excluded === null);
    this.groupNames = bundle.catalog.groups.map((g) => g.name);
    this.stateNames = bundle.catalog.states.map((s) => s.name);
    const profiles = bundle.policy.profiles ?? {};
    this.profileNames = Object.keys(profiles).sort();
    this.unknownProfile = fresh('no-profile', (p) => Object.hasOwn(profiles, p));
    this.disabledSomewhere = new Set(Object.values(profiles).flatMap((p) => p.disable ?? []));
    this.enabledSomewhere = new Set(Object.values(profiles).flatMap((p) => p.enable ?? []));
  }

  vectors(): Vector[] {
    return this.out;
  }

  chooseAll(): void {
    this.roles();
    this.defaults();
    this.groupExpansion();
    this.groupPermission();
    this.checkOrder();
    this.groupCheck();
    this.stateCheck();
    this.policyChecks();
    this.gates();
    this.profiles();
    this.connections();
    this.approval();
    this.answerOrder();
    this.decideOutcomes();
  }

  private describe(subject: string): Who {
    const info = subjectInfo(this.loaded, subject);
    const n = this.loaded.tools.length;
    const allowed = new Uint8Array(n);
    const denied = new Uint8Array(n);
    for (const r of info.roles) {
      const role = this.loaded.roles.get(r);
      if (!role) continue;
      for (let i = 0; i < n; i++) {
        allowed[i] |= role.allow[i];
        denied[i] |= role.deny[i];
      }
    }
    return { subject, roles: info.roles, anyGroup: info.permitsAnyGroup, permitted: info.permittedGroups, allowed, denied };
  }

  private permits(w: Who, group: string): boolean {
    return w.anyGroup || w.permitted.has(group);
  }

  private closure(group: string): readonly string[] {
    return this.loaded.groupClosure.get(group) ?? [group];
  }

  // ---- recording ----

  /** Adds an evaluate vector pinning the outcome of `ids` (and the envelope when asked). */
  private pin(
    rules: string[],
    request: EvaluationRequest,
    ids: readonly string[],
    extra: { envelope?: boolean; rejection?: boolean; count?: boolean } = {},
  ): void {
    const req = { ...request, at: request.at ?? CONFORMANCE_AT };
    const { envelope, outcomes } = evaluateTools(this.loaded, req, ids);
    const expect: EvaluateExpectation = { rejected: envelope.rejected !== undefined };
    if (extra.envelope) Object.assign(expect, { roles: [...envelope.roles], groups: [...envelope.groups], state: envelope.state });
    if (envelope.rejected && extra.rejection) expect.rejectedGroups = [...envelope.rejected.groups];
    for (const [id, o] of outcomes) {
      if ('decision' in o) (expect.decisions ??= {})[id] = o.decision;
      else (expect.hidden ??= {})[id] = o.reason;
    }
    if (extra.count && !envelope.rejected) expect.visibleCount = evaluate(this.loaded, req).tools.length;
    this.push({ rules, request: req, expect });
  }

  private push(v: Vector): void {
    const key = canonicalJson({ r: v.request, c: 'call' in v ? v.call : null, e: v.expect });
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.out.push(v);
  }

  // ---- request building ----

  /** A request for `w` under which each named check of tool `t` passes or fails as wanted; null when no request can. */
  private requestFor(w: Who, t: LoadedTool, want: Want): EvaluationRequest | null {
    if (!this.feasible(t, want)) return null;
    const i = t.pos;
    // The checks no request changes, first and without allocating: searches ask this of every
    // (tool, subject) pair, and most pairs fail here.
    if (want.excluded !== undefined && want.excluded !== (t.excluded === null)) return null;
    if (want.denied !== undefined && want.denied !== (w.denied[i] === 0)) return null;
    if (want.not_allowed !== undefined && want.not_allowed !== (w.allowed[i] === 1)) return null;
    const req: EvaluationRequest = { subject: w.subject };
    for (const check of CHECKS) {
      const pass = want[check];
      if (pass === undefined || check === 'excluded' || check === 'denied' || check === 'not_allowed') continue;
      const frag = this.fragment(w, t, check, pass);
      if (frag === null) return null;
      Object.assign(req, frag);
    }
    // Left to the default group, a subject no role lets ask for it would be rejected outright.
    if (req.groups === undefined && !this.permits(w, 'default')) req.groups = [];
    return req;
  }

  /** A quick, subject-free test that no request can make `t` meet `want` (large catalogs skip most tools here). */
  private feasible(t: LoadedTool, want: Want): boolean {
    return meetsMasks(this.feasibilityBits()[t.pos], feasibilityMasks(want));
  }

  /** Per tool position, the facts about the tool that feasible reads (FEASIBLE_* bits), set once. */
  private feasibilityBits(): Uint8Array {
    if (this.toolBits === undefined) {
      const bits = new Uint8Array(this.loaded.tools.length);
      for (const t of this.loaded.tools) {
        const scoped = this.loaded.profileScoped[t.pos] === 1;
        bits[t.pos] =
          (t.excluded === null ? FEASIBLE_LIVE : 0) |
          (t.allStates ? FEASIBLE_ALL_STATES : 0) |
          (t.requires.length === 0 ? FEASIBLE_NO_GATES : 0) |
          (t.requiresConnection ? 0 : FEASIBLE_NO_CONNECTION) |
          (!scoped && !this.disabledSomewhere.has(t.id) ? FEASIBLE_PROFILE_PASSES : 0) |
          (scoped && !this.enabledSomewhere.has(t.id) ? FEASIBLE_PROFILE_FAILS : 0);
      }
      this.toolBits = bits;
    }
    return this.toolBits;
  }

  private fragment(w: Who, t: LoadedTool, check: Check, pass: boolean): Fragment | null {
    switch (check) {
      case 'group': {
        if (pass) {
          const g = t.groups.find((x) => this.permits(w, x));
          if (g !== undefined) return { groups: [g] };
          return w.anyGroup ? { groups: ['*'] } : null;
        }
        const other = this.groupNames.find((g) => this.permits(w, g) && !this.closure(g).some((x) => t.groups.includes(x)));
        return { groups: other === undefined ? [] : [other] };
      }
      case 'state': {
        if (pass) {
          if (t.allStates || t.states.has('undefined')) return {};
          return { state: [...t.states].sort()[0] };
        }
        if (t.allStates) return null;
        if (!t.states.has('undefined')) return {};
        // A state no tool lists exists as far as requests go: it is in no tool's availableInStates.
        return { state: this.stateNames.find((s) => !t.states.has(s)) ?? fresh('no-state', (s) => t.states.has(s)) };
      }
      case 'runtime_gate': {
        if (pass) {
          const facts = satisfyingFacts(t.requires);
          return facts === null ? null : Object.keys(facts).length > 0 ? { facts } : {};
        }
        return t.requires.length > 0 ? {} : null;
      }
      case 'profile': {
        const scoped = this.loaded.profileScoped[t.pos] === 1;
        if (pass) {
          if (!scoped) return {};
          const p = this.profileNames.find((name) => {
            const prof = this.loaded.profiles.get(name)!;
            return prof.enable.has(t.id) && !prof.disable.has(t.id);
          });
          return p === undefined ? null : { profile: p };
        }
        const p = this.profileNames.find((name) => this.loaded.profiles.get(name)!.disable.has(t.id));
        if (p !== undefined) return { profile: p };
        return scoped ? {} : null;
      }
      case 'no_connection': {
        if (!t.requiresConnection) return pass ? {} : null;
        if (!pass) return { allowedConnectionIds: [] };
        return this.grantsFor(w, t, AT_MS).length > 0 ? {} : null;
      }
      default:
        return null;
    }
  }

  /** The grants that give `w` a connection for `t` at an instant (no allowedConnectionIds). */
  private grantsFor(w: Who, t: LoadedTool, atMs: number): { connectionId: string; expiresMs: number; viaRole: boolean; viaSubject: boolean }[] {
    const out = [];
    for (const g of this.loaded.grants) {
      if (g.tools[t.pos] !== 1 || !(atMs < g.expiresMs)) continue;
      const viaSubject = g.subjects.has(w.subject);
      const viaRole = w.roles.some((r) => g.subjects.has(r));
      if (viaSubject || viaRole) out.push({ connectionId: g.connectionId, expiresMs: g.expiresMs, viaRole, viaSubject });
    }
    return out;
  }

  private allPass(): Want {
    return Object.fromEntries(CHECKS.map((c) => [c, true])) as Want;
  }

  /** The first (subject, tool, request) for which `test` gives a request. */
  private find(
    test: (w: Who, t: LoadedTool) => EvaluationRequest | null,
    tools: readonly LoadedTool[] = this.loaded.tools,
    want?: Want,
    toolTest?: (t: LoadedTool) => boolean,
  ): { w: Who; t: LoadedTool; req: EvaluationRequest } | null {
    // The searches over the catalog ask feasible of every tool: read off bits set once per tool.
    const masks = want ? feasibilityMasks(want) : null;
    const bits = masks ? this.feasibilityBits() : null;
    for (const t of tools) {
      if (masks && bits && !meetsMasks(bits[t.pos], masks)) continue;
      if (toolTest && !toolTest(t)) continue;
      for (const w of this.who) {
        const req = test(w, t);
        if (req !== null) return { w, t, req };
      }
    }
    return null;
  }

  // ---- the rules ----

  /** R6.2: a subject without roles sees nothing, every tool filtered no_role, before any other check or rejection. */
  private roles(): void {
    const excluded = this.loaded.tools.find((t) => t.excluded !== null);
    const firstLive = this.live[0];
    const ids = [excluded?.id, firstLive?.id].filter((x): x is string => x !== undefined);
    // Groups are still expanded and named in the answer: ask for the widest one and one no role could permit.
    const outside = fresh('no-group', (g) => this.groupNames.includes(g));
    const widest = [...this.groupNames].sort((a, b) => this.closure(b).length - this.closure(a).length)[0];
    // Requested out of sorted order, so an answer that lists groups as requested shows it.
    const groups = widest === undefined ? [outside] : outside < widest ? [widest, outside] : [outside, widest];
    this.pin(['R6.2', 'R6.3'], { subject: this.nobody, groups }, [...new Set(ids)], {
      envelope: true,
      count: true,
    });
    // Bound to no role at all is the same as unbound.
    const bindings = this.bundle.policy.bindings ?? {};
    const empty = Object.keys(bindings)
      .sort()
      .find((s) => bindings[s].length === 0);
    if (empty !== undefined && firstLive) this.pin(['R6.2'], { subject: empty }, [firstLive.id], { envelope: true });
  }

  /** R6.1: groups default to ["default"], the state to "undefined". */
  private defaults(): void {
    for (const w of this.who) {
      if (!this.permits(w, 'default')) {
        this.pin(['R6.1', 'R6.4'], { subject: w.subject }, [], { envelope: true, rejection: true });
        continue;
      }
      const inDefault = this.closure('default');
      const ids: string[] = [];
      const a = this.live.find((t) => t.groups.some((g) => inDefault.includes(g)) && w.allowed[t.pos] === 1);
      const b = this.live.find((t) => !t.groups.some((g) => inDefault.includes(g)) && w.allowed[t.pos] === 1 && w.denied[t.pos] === 0);
      // A tool in the default group kept out only by the default state.
      const c = this.live.find((t) => t.groups.some((g) => inDefault.includes(g)) && !t.allStates && !t.states.has('undefined'));
      const d = this.live.find((t) => t.groups.some((g) => inDefault.includes(g)) && !t.allStates && t.states.has('undefined'));
      for (const t of [a, b, c, d]) if (t) ids.push(t.id);
      this.pin(['R6.1'], { subject: w.subject }, [...new Set(ids)], { envelope: true });
      break;
    }
  }

  /** R6.3: requested groups expand through includes, transitively; the answer lists them sorted. */
  private groupExpansion(): void {
    for (const depth of [1, 2]) {
      for (const g of this.groupNames) {
        const reach = reachAt(this.bundle, g, depth);
        const w = reach.size > 0 ? this.who.find((x) => this.permits(x, g)) : undefined;
        const t = w && this.live.find((x) => !x.groups.includes(g) && x.groups.some((y) => reach.has(y)));
        if (w && t) {
          this.pin(['R6.3', 'R6.7'], { subject: w.subject, groups: [g] }, [t.id], { envelope: true });
          break;
        }
      }
    }
  }

  /** R6.4: every requested group must be permitted by the union of the subject's roles' expanded groups. */
  private groupPermission(): void {
    const policyRoles = this.bundle.policy.roles ?? {};
    // Each kind of permission vector once: the rule is the same for every subject, so one subject
    // that shows it is enough, and a bundle's vectors stay a small part of it.
    const pinned = new Set<string>();
    const once = (kind: string, pin: () => void) => {
      if (pinned.has(kind)) return;
      pinned.add(kind);
      pin();
    };
    for (const w of this.who) {
      if (w.anyGroup) continue;
      const perm = w.roles.map((r) => new Set(this.loaded.roles.get(r)?.groups ?? []));
      // Across roles: one group from each of two roles, which no single role permits together.
      for (let a = 0; a < perm.length; a++) {
        for (let b = 0; b < perm.length; b++) {
          if (a === b) continue;
          const ga = [...perm[a]].sort().find((g) => !perm[b].has(g));
          const gb = [...perm[b]].sort().find((g) => !perm[a].has(g));
          if (ga !== undefined && gb !== undefined) {
            once('across roles', () => this.pin(['R6.4'], { subject: w.subject, groups: [ga, gb] }, [], { rejection: true }));
            a = perm.length;
            break;
          }
        }
      }
      // Through a role's includes: a group only reached by expanding a role's own groups.
      const raw = new Set(w.roles.flatMap((r) => policyRoles[r]?.groups ?? []));
      const reached = [...w.permitted].sort().find((g) => !raw.has(g));
      if (reached !== undefined) once('includes', () => this.pin(['R6.4', 'R6.3'], { subject: w.subject, groups: [reached] }, [], { rejection: true }));
      // Refused: named in request order, once each, and nothing else is answered.
      const outside = this.groupNames.filter((g) => !w.permitted.has(g));
      const made = fresh('unpermitted', (g) => this.groupNames.includes(g));
      const refused = [outside[0] ?? made, outside[1] ?? fresh(`${made}-2`, (g) => this.groupNames.includes(g))];
      const ok = [...w.permitted].sort()[0];
      const groups = ok === undefined ? [refused[1], refused[0], refused[1]] : [refused[1], ok, refused[0]];
      once(ok === undefined ? 'refused' : 'refused beside a permitted one', () =>
        this.pin(['R6.4'], { subject: w.subject, groups: [...new Set(groups)] }, [], { envelope: true, rejection: true }),
      );
      once('star refused', () => this.pin(['R6.4'], { subject: w.subject, groups: ['*'] }, [], { rejection: true }));
    }
    // A role with "*" permits any name, even one no group has; and so does a subject's role other
    // than its first (permission is the union over all of its roles).
    const name = fresh('any-group', (g) => this.groupNames.includes(g));
    const star = this.who.find((w) => w.anyGroup);
    const starLater = this.who.find((w) => w.anyGroup && w.roles.length > 1 && this.loaded.roles.get(w.roles[0])?.permitsAnyGroup === false);
    for (const w of new Set([star, starLater])) {
      if (w) this.pin(['R6.4'], { subject: w.subject, groups: [name] }, [], { envelope: true, rejection: true });
    }
  }

  /** R6.5: for every two checks, a tool failing both, the earlier one first: the answer names the earlier. */
  private checkOrder(): void {
    // Each check against the nearest later one a tool can fail together with it. Any other order
    // of the checks puts some neighbouring two the other way round (were every neighbouring two in
    // order, the whole order would be), so these tell every misordering apart that pairs can.
    for (let x = 0; x < CHECKS.length; x++) {
      for (let y = x + 1; y < CHECKS.length; y++) {
        const want: Want = { [CHECKS[x]]: false, [CHECKS[y]]: false };
        for (let b = 0; b < x; b++) want[CHECKS[b]] = true;
        const hit = this.find((w, t) => this.requestFor(w, t, want), this.loaded.tools, want);
        if (hit) {
          this.pin(['R6.5', CHECK_RULE[CHECKS[x]], CHECK_RULE[CHECKS[y]]], hit.req, [hit.t.id]);
          break;
        }
      }
    }
    // Each check alone, everything else passing.
    for (const c of CHECKS) {
      const want = this.allPass();
      want[c] = false;
      const hit = this.find((w, t) => this.requestFor(w, t, want), this.loaded.tools, want);
      if (hit) this.pin(['R6.5', CHECK_RULE[c]], hit.req, [hit.t.id]);
    }
    const visible = this.find((w, t) => this.requestFor(w, t, this.allPass()), this.live);
    if (visible) this.pin(['R6.5', 'R6.14'], visible.req, [visible.t.id]);
  }

  /** R6.7: `[]` requests no group; `*` every group; any one of the tool's groups is enough. */
  private groupCheck(): void {
    const defaultGroups = this.closure('default');
    const inDefault = (t: LoadedTool) => t.groups.some((g) => defaultGroups.includes(g));
    // A failing check is told apart by any later answer: only the checks before it need to pass.
    // What depends on the tool alone is asked once per tool (the first subject then answers), what
    // depends on the subject alone of the first tool only: not once per tool and subject.
    const empty = this.find((w) => ({ subject: w.subject }), this.live, undefined, inDefault);
    if (empty) this.pin(['R6.7'], { ...empty.req, groups: [] }, [empty.t.id], { envelope: true });
    else if (this.who[0]) this.pin(['R6.7'], { subject: this.who[0].subject, groups: [] }, [], { envelope: true });
    const star = this.find((w) => (w.anyGroup ? { subject: w.subject } : null), this.live.slice(0, 1));
    if (star) this.pin(['R6.7'], { ...star.req, groups: ['*'] }, [star.t.id], { envelope: true });
    // A tool in no group at all (`groups: []`, not absent): "*" shows it, the default group does not.
    const groupless = (t: LoadedTool) => t.groups.length === 0;
    const starShows = this.find((w) => (w.anyGroup ? { subject: w.subject, groups: ['*'] } : null), this.live, undefined, groupless);
    if (starShows) this.pin(['R6.7', 'R2.8'], starShows.req, [starShows.t.id]);
    const notDefault = this.find(
      (w) => {
        const g = [...w.permitted].sort().find((x) => this.closure(x).includes('default'));
        return w.anyGroup ? { subject: w.subject, groups: ['default'] } : g === undefined ? null : { subject: w.subject, groups: [g] };
      },
      this.live,
      undefined,
      groupless,
    );
    if (notDefault) this.pin(['R6.7', 'R2.8'], notDefault.req, [notDefault.t.id]);
    // A tool in several groups, requested by one that is not its first.
    const later = this.find(
      (w, t) => {
        const g = t.groups.slice(1).find((x) => this.permits(w, x) && !this.closure(x).includes(t.groups[0]));
        return g === undefined ? null : { subject: w.subject, groups: [g] };
      },
      this.live,
      undefined,
      (t) => t.groups.length >= 2,
    );
    if (later) this.pin(['R6.7'], later.req, [later.t.id]);
  }

  /** R6.8: availableInStates absent means every state. */
  private stateCheck(): void {
    // A state no tool lists is a valid request too (R6.8): a tenant with no state of its own still tells these apart.
    const nonInitial = this.stateNames.find((s) => s !== 'undefined') ?? fresh('no-state', (s) => this.stateNames.includes(s));
    const base: Want = { group: true };
    // Which tools qualify is asked once per tool, not once per tool and subject.
    const requestFor = (w: Who, t: LoadedTool) => this.requestFor(w, t, base);
    // Absent availableInStates is every state (a runtime reads v1's "*" as absent: R2.9).
    // (allStates: a live tool's availableInStates absent, or holding "*", as its definition reads it.)
    const absent = this.find(requestFor, this.live, undefined, (t) => t.allStates);
    if (absent) this.pin(['R6.8'], { ...absent.req, state: nonInitial }, [absent.t.id], { envelope: true });
    const listedState = (t: LoadedTool) => [...t.states].sort().find((x) => x !== 'undefined');
    const listed = this.find(
      (w, t) => {
        const rest = this.requestFor(w, t, base);
        return rest ? { ...rest, state: listedState(t)! } : null;
      },
      this.live,
      undefined,
      (t) => !t.allStates && listedState(t) !== undefined,
    );
    if (listed) this.pin(['R6.8'], listed.req, [listed.t.id]);
  }

  /** R6.9 and R6.10: deny wins, from any role; allow from any role. */
  private policyChecks(): void {
    const reach: Want = { group: true, state: true };
    const multi = this.who.filter((w) => w.roles.length > 1);
    const roleOf = (name: string) => this.loaded.roles.get(name);
    // Allowed and denied: deny wins (same role or another).
    const both = this.find((w, t) => (w.allowed[t.pos] && w.denied[t.pos] ? this.requestFor(w, t, reach) : null), this.live);
    if (both) this.pin(['R6.9'], both.req, [both.t.id]);
    // Each of these once: the rule is the same for every subject that shows it.
    let acrossRoles = false;
    let laterRole = false;
    for (const w of multi) {
      // Denied by a role that does not allow it, allowed by another that does not deny it.
      const t = acrossRoles
        ? undefined
        : this.live.find((x) => {
            const roles = w.roles.map(roleOf);
            return roles.some((r) => r?.deny[x.pos] && !r.allow[x.pos]) && roles.some((r) => r?.allow[x.pos] && !r.deny[x.pos]);
          });
      const req = t ? this.requestFor(w, t, reach) : null;
      if (t && req) {
        this.pin(['R6.9'], req, [t.id]);
        acrossRoles = true;
      }
      // Allowed only by a role that is not the subject's first.
      const first = roleOf(w.roles[0]);
      const u = laterRole ? undefined : this.live.find((x) => first && !first.allow[x.pos] && w.allowed[x.pos] && !w.denied[x.pos]);
      const req2 = u ? this.requestFor(w, u, reach) : null;
      if (u && req2) {
        this.pin(['R6.10'], req2, [u.id]);
        laterRole = true;
      }
      if (acrossRoles && laterRole) break;
    }
  }

  /** R6.11: every condition must hold; facts compare as JSON values; any listed value matches. */
  private gates(): void {
    const reach: Want = { group: true, state: true, denied: true, not_allowed: true };
    const gated = this.live.filter((t) => t.requires.length > 0);
    // One tool per kind of probe is enough: the kinds, not the tools, are what a misreading confuses.
    const kinds = new Set<string>();
    const once = (kind: string) => !kinds.has(kind) && (kinds.add(kind), true);
    for (const t of gated) {
      for (const w of this.who) {
        const base = this.requestFor(w, t, reach);
        const pass = satisfyingFacts(t.requires);
        if (!base || !pass) continue;
        // Missing facts.
        if (once('missing')) this.pin(['R6.11'], base, [t.id]);
        for (const gate of t.requires) {
          // A later listed value matches too.
          if (gate.in.length > 1 && once('later')) this.pin(['R6.11'], { ...base, facts: { ...pass, [gate.fact]: gate.in[gate.in.length - 1] } }, [t.id]);
          // The same text or loose equality in another JSON type does not match.
          for (const v of gate.in) {
            for (const twin of twins(v)) {
              if (gate.in.some((x) => x === twin)) continue;
              if (!once(`${typeof v}>${typeof twin}:${String(v) === String(twin)}`)) continue;
              this.pin(['R6.11'], { ...base, facts: { ...pass, [gate.fact]: twin } }, [t.id]);
            }
          }
        }
        // One condition failing among several that hold.
        if (t.requires.length > 1 && once(`several:${t.requires.length}`)) {
          const last = t.requires[t.requires.length - 1];
          const facts = { ...pass };
          delete facts[last.fact];
          if (t.requires.some((g) => g !== last && g.fact === last.fact)) continue;
          this.pin(['R6.11'], { ...base, facts }, [t.id]);
        }
        break;
      }
    }
  }

  /** R6.12: enable scopes a tool to the profiles that enable it; disable hides under that profile; an unknown name is no profile. */
  private profiles(): void {
    const reach: Want = { group: true, state: true, denied: true, not_allowed: true, runtime_gate: true };
    const others = (name: string | undefined) => [...this.profileNames.filter((p) => p !== name), this.unknownProfile];
    const kinds = new Set<string>();
    for (const t of this.live) {
      const scoped = this.loaded.profileScoped[t.pos] === 1;
      const disabledBy = this.profileNames.filter((p) => this.loaded.profiles.get(p)!.disable.has(t.id));
      if (!scoped && disabledBy.length === 0) continue;
      const enabledBy = this.profileNames.filter((p) => this.loaded.profiles.get(p)!.enable.has(t.id));
      const kind = `${scoped}:${disabledBy.length}:${enabledBy.length}:${enabledBy.some((p) => disabledBy.includes(p))}`;
      if (kinds.has(kind)) continue;
      const hit = this.find((w, x) => (x === t ? this.requestFor(w, t, reach) : null), [t]);
      if (!hit) continue;
      kinds.add(kind);
      const { profile: _p, ...base } = hit.req;
      this.pin(['R6.12'], base, [t.id]);
      const enabling = this.profileNames.find((p) => this.loaded.profiles.get(p)!.enable.has(t.id));
      for (const p of [...new Set([...disabledBy, ...(enabling ? [enabling] : []), ...others(enabling).slice(-2)])]) {
        this.pin(['R6.12'], { ...base, profile: p }, [t.id]);
      }
    }
  }

  /** R6.13: an unexpired grant to the subject or one of its roles covering the tool, within allowedConnectionIds when given. */
  private connections(): void {
    const reach: Want = { group: true, state: true, denied: true, not_allowed: true, runtime_gate: true, profile: true };
    const kinds = new Set<string>();
    for (const t of this.live) {
      if (!t.requiresConnection) continue;
      for (const w of this.who) {
        const base = this.requestFor(w, t, reach);
        if (!base) continue;
        const grants = this.grantsFor(w, t, -Infinity);
        const kind =
          grants.length === 0
            ? 'none'
            : `${grants.some((g) => g.viaRole && !g.viaSubject)}:${grants.some((g) => g.viaSubject)}:${grants.some((g) => Number.isFinite(g.expiresMs))}`;
        if (kinds.has(kind)) continue;
        kinds.add(kind);
        this.pin(['R6.13'], base, [t.id]);
        if (grants.length === 0) continue;
        const ids = grants.map((g) => g.connectionId);
        this.pin(['R6.13'], { ...base, allowedConnectionIds: [] }, [t.id]);
        // Each grant alone: one to the subject, one to a role tell those two readings apart.
        for (const id of ids) this.pin(['R6.13'], { ...base, allowedConnectionIds: [id] }, [t.id]);
        const other = this.loaded.grants.map((g) => g.connectionId).find((c) => !ids.includes(c)) ?? fresh('no-conn', (c) => ids.includes(c));
        this.pin(['R6.13'], { ...base, allowedConnectionIds: [other] }, [t.id]);
        // The expiry instant: still granted one millisecond before, gone at it and after.
        for (const end of new Set(grants.map((g) => g.expiresMs).filter((ms) => Number.isFinite(ms)))) {
          for (const ms of [end - 1, end, end + 1]) this.pin(['R6.13'], { ...base, at: new Date(ms).toISOString() }, [t.id]);
        }
      }
    }
  }

  /** R6.14: require_approval when the effect is in the requireApproval of any of the subject's roles. */
  private approval(): void {
    const seen = new Set<string>();
    for (const w of this.who.slice(0, 6)) {
      const roles = w.roles.map((r) => this.loaded.roles.get(r)!);
      // The subject's roles asking approval for an effect are the same for every tool of that effect.
      const askingFor = new Map<string, LoadedRole[]>();
      for (const t of this.live) {
        if (w.allowed[t.pos] === 0 || w.denied[t.pos] === 1) continue;
        const effect = t.effect!;
        let asking = askingFor.get(effect);
        if (asking === undefined) askingFor.set(effect, (asking = roles.filter((r) => r.requireApproval.has(effect))));
        const kind =
          asking.length === 0 ? `allow:${effect}` : `${asking.some((r) => !r.allow[t.pos])}:${asking[0] !== roles[0]}:${asking.length < roles.length}`;
        if (seen.has(kind)) continue;
        const req = this.requestFor(w, t, this.allPass());
        if (!req) continue;
        seen.add(kind);
        this.pin(['R6.14'], req, [t.id]);
      }
    }
  }

  /** R6.15: tools and filtered each in catalog order (ascending ids, UTF-16 code units). */
  private answerOrder(): void {
    const facts = this.gateFacts();
    for (const w of this.who.slice(0, 3)) {
      const groups = w.anyGroup ? ['*'] : [...w.permitted].sort();
      const candidates: EvaluationRequest[] = [
        { subject: w.subject, groups, facts, at: CONFORMANCE_AT },
        { subject: w.subject, groups, at: CONFORMANCE_AT },
        ...this.profileNames.slice(0, 2).map((profile) => ({ subject: w.subject, groups, facts, profile, at: CONFORMANCE_AT })),
        // One group at a time leaves more reasons side by side.
        ...(w.anyGroup ? this.groupNames : groups).slice(0, 3).map((g) => ({ subject: w.subject, groups: [g], facts, at: CONFORMANCE_AT })),
      ];
      // Candidates are scored from an outline of their answer; only the one kept is evaluated.
      let best: { req: EvaluationRequest; score: number } | null = null;
      for (const req of candidates) {
        const outline = evaluationOutline(this.loaded, req, ANSWER_IDS_SCORED);
        if (outline.rejected) continue;
        const score = this.answerScore(outline);
        if (!best || score > best.score) best = { req, score };
      }
      if (!best) continue;
      const { req } = best;
      const got = evaluate(this.loaded, req);
      if (got.tools.length + got.filtered.length < 2) continue;
      if (Object.keys(facts).length === 0) delete req.facts;
      const expect: EvaluateExpectation = { rejected: false, visibleCount: got.tools.length };
      // Both lists are in catalog order: in locale order too when the whole catalog is.
      const inLocaleOrder = this.catalogInLocaleOrder();
      const visible = orderWitness(got.tools, 'decision', inLocaleOrder);
      const filtered = orderWitness(got.filtered, 'reason', inLocaleOrder);
      if (visible.length > 1) expect.visible = visible.map((t) => t.id);
      if (filtered.length > 1) expect.filteredOrder = filtered.map((t) => t.id);
      for (const t of visible) (expect.decisions ??= {})[t.id] = t.decision;
      for (const t of filtered) (expect.hidden ??= {})[t.id] = t.reason;
      this.push({ rules: ['R6.15'], request: req, expect });
      // An answer that shows both orders (reasons out of ascending order, ids out of locale order
      // unless the whole catalog is in it) is enough.
      const reasonsDescend = got.filtered.some((f, i) => i > 0 && got.filtered[i - 1].reason > f.reason);
      const idsInverted = inLocaleOrder || got.tools.some((t, i) => i > 0 && localeOrder.compare(got.tools[i - 1].id, t.id) > 0);
      if (reasonsDescend && idsInverted) break;
    }
  }

  /**
   * How much an answer shows of its order: how many distinct reasons and decisions it holds, plus
   * 10 when its filtered reasons are out of ascending order (sorting by reason would reorder them)
   * and 10 when locale collation would reorder its first 200 visible ids.
   */
  private answerScore(outline: EvaluationOutline): number {
    let idsInverted = false;
    const shown = outline.firstVisible;
    const tools = this.loaded.tools;
    if (!this.catalogInLocaleOrder()) {
      for (let i = 0; i + 1 < shown.length; i++) {
        if (localeOrder.compare(tools[shown[i]].id, tools[shown[i + 1]].id) > 0) {
          idsInverted = true;
          break;
        }
      }
    }
    return outline.reasons.size + outline.decisions.size + (outline.reasonsDescend ? 10 : 0) + (idsInverted ? 10 : 0);
  }

  /**
   * Whether locale collation keeps the catalog's (code-unit) order. Collation is a total order, so
   * then it keeps the order of every answer's ids too (each list is in catalog order), and the
   * searches for two ids it would swap need not compare any: asked once instead of for every
   * neighbouring pair of every candidate answer.
   */
  private catalogInLocaleOrder(): boolean {
    if (this.inLocaleOrder === undefined) {
      const tools = this.loaded.tools;
      let sorted = true;
      for (let i = 1; i < tools.length && sorted; i++) if (localeOrder.compare(tools[i - 1].id, tools[i].id) > 0) sorted = false;
      this.inLocaleOrder = sorted;
    }
    return this.inLocaleOrder;
  }

  /** Facts meeting the runtime gates of live tools: for each fact, the value the first tool gated on it needs. */
  private gateFacts(): Record<string, Fact> {
    if (this.factsMet === undefined) {
      const facts: Record<string, Fact> = {};
      for (const t of this.live) {
        // A tool without gates adds no fact.
        if (t.requires.length === 0) continue;
        const f = satisfyingFacts(t.requires);
        if (f) for (const [k, v] of Object.entries(f)) if (!(k in facts)) facts[k] = v;
      }
      this.factsMet = facts;
    }
    // A copy each time: requests hold it and are handed out in vectors.
    return { ...this.factsMet };
  }

  // ---- decide ----

  private call(rules: string[], request: EvaluationRequest, call: Omit<VectorCall, 'toolCallId'>, withId = true): void {
    const req = { ...request, at: request.at ?? CONFORMANCE_AT };
    // Facts change only whether a gated tool is visible: a call of an ungated tool leaves them out.
    if (req.facts !== undefined && (this.loaded.byId.get(call.name)?.requires.length ?? 0) === 0) delete req.facts;
    // The caller's toolCallId comes back (R7.1): one call that names one shows it; the others carry
    // none and expect a new UUID, which is R7.1 as well.
    const full: VectorCall = withId && this.callCount++ === 0 ? { toolCallId: 'conformance-call', ...call } : { ...call };
    const view = createView(this.loaded, req);
    // Arguments an argument constraint refuses would let a misreading of this vector's rule pass: others, when found.
    const tool = this.loaded.byId.get(full.name);
    const args = tool ? argumentsClearOfConstraints(this.loaded, view.subject.roles, tool, full.arguments) : full.arguments;
    if (args !== undefined) full.arguments = args;
    const got = decide(view, full);
    const expect: DecideVector['expect'] = { decision: got.decision };
    if (got.errorCode !== undefined) expect.errorCode = got.errorCode;
    if (got.errors && got.errors.length > 0) expect.pointers = [got.errors[0].pointer];
    this.push({ rules, request: req, call: full, expect });
  }

  private visiblePool(): { w: Who; t: LoadedTool; req: EvaluationRequest }[] {
    const facts = this.gateFacts();
    const pool: { w: Who; t: LoadedTool; req: EvaluationRequest }[] = [];
    for (const w of this.who.slice(0, 4)) {
      const req: EvaluationRequest = { subject: w.subject, groups: w.anyGroup ? ['*'] : [...w.permitted].sort(), at: CONFORMANCE_AT };
      if (Object.keys(facts).length > 0) req.facts = facts;
      for (const v of evaluate(this.loaded, req).tools) pool.push({ w, t: this.loaded.byId.get(v.id)!, req });
    }
    return pool;
  }

  /** R7: each outcome of decide reachable on this tenant, and which code wins when several apply. */
  private decideOutcomes(): void {
    const anyWho = this.who[0];
    const unknown = fresh('no__such_tool', (id) => this.loaded.byId.has(id));
    this.call(['R7.2', 'R7.8'], { subject: anyWho?.subject ?? this.nobody }, { name: unknown, arguments: '{' });
    const excluded = this.loaded.tools.find((t) => t.excluded !== null);
    if (excluded) this.call(['R7.2', 'R7.3'], { subject: anyWho?.subject ?? this.nobody }, { name: excluded.id, arguments: '{}' });
    if (this.live[0]) this.call(['R7.3', 'R7.8'], { subject: this.nobody }, { name: this.live[0].id, arguments: '{' });

    // Visible tools come from one broad request per subject, so no search runs over the whole catalog.
    const pool = this.visiblePool();
    // Tools already called (their validators compiled) first: the fewer distinct tools the vectors
    // call, the less a runtime compiles to check them.
    const visible = (pred: (w: Who, t: LoadedTool) => boolean) =>
      validatorsRunFirst(pool).find(({ w, t }) => pred(w, t)) ?? this.find((w, t) => (pred(w, t) ? this.requestFor(w, t, this.allPass()) : null), this.live);
    // The same, for a test of the tool alone: asked once per tool, not once per tool and subject.
    const visibleTool = (test: (t: LoadedTool) => boolean) =>
      validatorsRunFirst(pool).find(({ t }) => test(t)) ?? this.find((w, t) => this.requestFor(w, t, this.allPass()), this.live, undefined, test);
    const approval = (w: Who, t: LoadedTool) => w.roles.some((r) => this.loaded.roles.get(r)!.requireApproval.has(t.effect!));
    const plain = (w: Who, t: LoadedTool) =>
      !t.requiresConnection && w.allowed[t.pos] === 1 && w.denied[t.pos] === 0 && validArguments(t, this.findings) !== null;
    for (const asks of [false, true]) {
      // Approval first: it reads the role, plain may compile the tool's input schema.
      const hit = visible((w, t) => approval(w, t) === asks && plain(w, t));
      if (!hit) continue;
      this.call(['R7.7'], hit.req, { name: hit.t.id, arguments: validArguments(hit.t, this.findings)! });
      // No toolCallId: the answer carries a new UUID.
      if (!asks) this.call(['R7.1'], hit.req, { name: hit.t.id, arguments: validArguments(hit.t, this.findings)! }, false);
    }
    // Arguments: absent means {}, unparsable is invalid_json, a schema failure is validation with pointers.
    const parsed = visibleTool((t) => !t.requiresConnection);
    if (parsed) {
      const { req, t } = parsed;
      this.call(['R7.5', 'R7.8'], req, { name: t.id, arguments: '{"a":' });
      // One schema failure of each kind the tenant's schemas allow: each has its own pointer rule.
      const kinds = new Set<string>();
      // Tools with equal schemas (equal text, one validator) give equal tries: each is tried once.
      const invalidBySchema = new Map<string, [string, string][]>();
      for (const { w, t: x, req: r } of validatorsRunFirst(pool).slice(0, 200)) {
        if (x.requiresConnection || w.denied[x.pos] === 1) continue;
        // A schema whose failures can only be of kinds already pinned adds no vector: its validator
        // (compiled on first use) is not needed.
        const schema = x.def!.inputSchema;
        if (!searchedForFailures(schema, kinds)) continue;
        const schemaText = JSON.stringify(schema);
        let invalid = invalidBySchema.get(schemaText);
        if (invalid === undefined) {
          // A schema whose failures are all of kinds pinned already is not run (nor compiled); its
          // tool counts as tried all the same (validatorOf), as it did when it was run.
          // The compiler judged every schema of the bundle; one the judge passes compiles.
          const finding = this.findings.of(x);
          const compiles = finding?.judgedClean ?? judgedSchemaProblems(schema, 'input').length === 0;
          if (finding) finding.judgedClean = compiles;
          invalid = mayFailAnew(schema, kinds, compiles) ? invalidArguments(x, this.findings) : (validatorOf(x), []);
          invalidBySchema.set(schemaText, invalid);
        }
        for (const [kind, args] of invalid) {
          if (kinds.has(kind)) continue;
          kinds.add(kind);
          this.call(['R7.6'], r, { name: x.id, arguments: args });
        }
      }
      const empty = visibleTool((x) => !x.requiresConnection && acceptsNoArguments(x, this.findings) === true);
      if (empty) this.call(['R7.5'], empty.req, { name: empty.t.id });
      const required = visibleTool((x) => !x.requiresConnection && acceptsNoArguments(x, this.findings) === false);
      if (required) this.call(['R7.5', 'R7.6'], required.req, { name: required.t.id });
      // A connection named for a tool that needs none is still checked against the grants.
      const granted = this.loaded.grants.map((g) => g.connectionId);
      const stray = fresh('no-conn', (c) => granted.includes(c));
      this.call(['R7.4', 'R7.8'], req, { name: t.id, arguments: '{', connectionId: stray });
      this.call(['R7.4'], req, { name: t.id, arguments: validArguments(t, this.findings) ?? '{}', connectionId: '' });
    }
    // Connections: missing is validation, outside the granted set policy_denied, both before the arguments.
    const conn = visibleTool((t) => t.requiresConnection);
    if (conn) {
      const { req, t, w } = conn;
      const granted = this.grantsFor(w, t, AT_MS).map((g) => g.connectionId);
      const args = validArguments(t, this.findings) ?? '{}';
      // (An empty connectionId is pinned on a tool that needs none, above: it is missing all the same.)
      this.call(['R7.4', 'R7.8'], req, { name: t.id, arguments: '{' });
      const outside = this.loaded.grants.map((g) => g.connectionId).find((c) => !granted.includes(c)) ?? fresh('no-conn', (c) => granted.includes(c));
      this.call(['R7.4', 'R7.8'], req, { name: t.id, arguments: '{', connectionId: outside });
      this.call(['R7.4', 'R7.7'], req, { name: t.id, arguments: args, connectionId: granted[0] });
      this.call(['R7.4', 'R7.8'], req, { name: t.id, arguments: '{', connectionId: granted[0] });
      // Granted, but not among the request's allowedConnectionIds: the tool is not visible.
      this.call(['R7.3', 'R7.4'], { ...req, allowedConnectionIds: [outside] }, { name: t.id, arguments: args, connectionId: granted[0] });
    }
    // A granted connection outside the request's allowedConnectionIds is refused at call time too.
    const twice = this.find(
      (w, t) => {
        const ids = this.grantsFor(w, t, AT_MS).map((g) => g.connectionId);
        if (ids.length < (t.requiresConnection ? 2 : 1)) return null;
        // The request before the arguments: finding arguments may compile the tool's input schema.
        const req = this.requestFor(w, t, this.allPass());
        if (req === null || validArguments(t, this.findings) === null) return null;
        return { ...req, allowedConnectionIds: t.requiresConnection ? ids.slice(0, 1) : [] };
      },
      validatorsRunFirst(this.live.map((t) => ({ t }))).map(({ t }) => t),
      undefined,
      // Most tools no grant covers: that needs no subject to tell, so it is asked once per tool.
      (t) => this.loaded.grants.some((g) => g.tools[t.pos] === 1),
    );
    if (twice) {
      const last = this.grantsFor(twice.w, twice.t, AT_MS).at(-1)!.connectionId;
      this.call(['R7.4'], twice.req, { name: twice.t.id, arguments: validArguments(twice.t, this.findings)!, connectionId: last });
    }
    // A connectionId member that a schema left open would accept is refused all the same. Whether
    // a schema is open is asked tool by tool, in catalog order, only until one serves: asking
    // it runs (and so compiles) the tool's validator, which a catalog of open schemas would
    // otherwise pay for every distinct schema in it.
    const isOpen = (t: LoadedTool) => smuggledArguments(t, this.findings) !== null;
    const open =
      validatorsRunFirst(pool).find(({ t }) => isOpen(t)) ?? this.find((w, t) => this.requestFor(w, t, this.allPass()), this.live, undefined, isOpen);
    if (open) {
      const { w, t, req } = open;
      const connectionId = t.requiresConnection ? this.grantsFor(w, t, AT_MS)[0]?.connectionId : undefined;
      this.call(['R7.10'], req, { name: t.id, arguments: smuggledArguments(t, this.findings)!, ...(connectionId === undefined ? {} : { connectionId }) });
    }
    // When the arguments also fail the schema, the schema's errors answer (R7.6 before R7.10).
    const both = visibleTool((t) => failingWithMember(t, this.findings) !== null);
    if (both) {
      const { w, t, req } = both;
      const connectionId = t.requiresConnection ? this.grantsFor(w, t, AT_MS)[0]?.connectionId : undefined;
      this.call(['R7.8', 'R7.10'], req, {
        name: t.id,
        arguments: failingWithMember(t, this.findings)!,
        ...(connectionId === undefined ? {} : { connectionId }),
      });
    }
  }
}

// What feasible() reads of a tool, as bits: live, available in every state, without runtime gates,
// without a connection, passing the profile check under every profile, failing it under every one.
const FEASIBLE_LIVE = 1;
const FEASIBLE_ALL_STATES = 2;
const FEASIBLE_NO_GATES = 4;
const FEASIBLE_NO_CONNECTION = 8;
const FEASIBLE_PROFILE_PASSES = 16;
const FEASIBLE_PROFILE_FAILS = 32;

/**
 * The bits a tool must have and must lack for some request to make it meet `want`: excluded or
 * live as wanted; a failing state check needs a tool not available in every state, a failing gate
 * one with gates, a failing connection check one that needs a connection; a failing profile check
 * needs a tool some profile disables or that only profiles enable, a passing one a tool that is
 * not only enabled by profiles none of which enables it.
 */
function feasibilityMasks(want: Want): [number, number] {
  let have = 0;
  let lack = 0;
  if (want.excluded === true) have |= FEASIBLE_LIVE;
  if (want.excluded === false) lack |= FEASIBLE_LIVE;
  if (want.state === false) lack |= FEASIBLE_ALL_STATES;
  if (want.runtime_gate === false) lack |= FEASIBLE_NO_GATES;
  if (want.no_connection === false) lack |= FEASIBLE_NO_CONNECTION;
  if (want.profile === false) lack |= FEASIBLE_PROFILE_PASSES;
  if (want.profile === true) lack |= FEASIBLE_PROFILE_FAILS;
  return [have, lack];
}

function meetsMasks(bits: number, [have, lack]: [number, number]): boolean {
  return (bits & have) === have && (bits & lack) === 0;
}

/** A name built from `base` that `taken` refuses. */
function fresh(base: string, taken: (name: string) => boolean): string {
  let name = base;
  for (let i = 2; taken(name); i++) name = `${base}-${i}`;
  return name;
}

/** Facts meeting every condition (the first value two conditions on one fact share), or null. */
function satisfyingFacts(gates: readonly RuntimeGate[]): Record<string, Fact> | null {
  const facts: Record<string, Fact> = {};
  for (const gate of gates) {
    const others = gates.filter((g) => g.fact === gate.fact);
    const v = gate.in.find((x) => others.every((g) => g.in.some((y) => y === x)));
    if (v === undefined) return null;
    facts[gate.fact] = v;
  }
  return facts;
}

/** Values that a loose reading of "equal" would confuse with `v`. */
function twins(v: Fact): Fact[] {
  const out: Fact[] = [String(v)];
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) out.push(Number(v));
  if (typeof v === 'string' && (v === 'true' || v === 'false')) out.push(v === 'true');
  if (typeof v === 'number' && (v === 0 || v === 1)) out.push(v === 1);
  if (typeof v === 'boolean') out.push(v ? 1 : 0);
  return out.filter((x) => x !== v);
}

/** Groups reached from `group` through exactly `depth` includes, and not sooner. */
function reachAt(bundle: Bundle, group: string, depth: number): Set<string> {
  const includes = new Map(bundle.catalog.groups.map((g) => [g.name, g.includes ?? []]));
  let frontier = new Set([group]);
  const seen = new Set([group]);
  for (let d = 0; d < depth; d++) {
    const next = new Set<string>();
    for (const g of frontier) for (const x of includes.get(g) ?? []) if (!seen.has(x)) seen.add(x), next.add(x);
    frontier = next;
  }
  return frontier;
}

/**
 * A few entries of an answer's list that pin its order: the first and last of each kind (decision
 * or reason), so an answer sorted by kind first differs, and two neighbours that locale collation
 * would swap (none when the list is known to be in locale order).
 */
function orderWitness<K extends string, E extends { readonly id: string } & { readonly [k in K]: string }>(
  entries: readonly E[],
  kind: K,
  inLocaleOrder: boolean,
): E[] {
  // By index: an answer names each tool once. The first two entries, the first two whose `kind`
  // descends (an order by reason would swap them), and the first two out of locale order (a
  // locale sort would swap them): enough to tell each misordering apart, and a few ids only.
  const pick = new Set<number>([0, 1]);
  for (let i = 0; i + 1 < entries.length; i++) {
    if (entries[i][kind] > entries[i + 1][kind]) {
      pick.add(i);
      pick.add(i + 1);
      break;
    }
  }
  if (!inLocaleOrder) {
    for (let i = 0; i + 1 < entries.length; i++) {
      if (localeOrder.compare(entries[i].id, entries[i + 1].id) > 0) {
        pick.add(i);
        pick.add(i + 1);
        break;
      }
    }
  }
  return entries.filter((_, i) => pick.has(i));
}

// What String.prototype.localeCompare does, with one collator made once instead of per call.
const localeOrder = new Intl.Collator();
// How many of an answer's first visible ids answerScore looks at for a locale inversion.
const ANSWER_IDS_SCORED = 200;

// The tools whose input-schema validator the chooser has run (so compiled). A runtime compiles
// the validator of every tool a decide vector calls while it checks the vectors, each costing it
// milliseconds: searches for a tool to call try these first, so the vectors call few distinct ones.
const validatorsRun = new WeakSet<LoadedTool>();

function validatorOf(t: LoadedTool): LoadedTool['validateInput'] {
  validatorsRun.add(t);
  return t.validateInput;
}

/** The entries whose tool's validator already ran first, the others after, each in their order. */
function validatorsRunFirst<E extends { t: LoadedTool }>(entries: readonly E[]): E[] {
  return [...entries.filter((e) => validatorsRun.has(e.t)), ...entries.filter((e) => !validatorsRun.has(e.t))];
}

/**
 * What the searches learn of an input schema by running its validator, by the schema object: the
 * answers depend on the schema alone (tools sharing one share them), and a search asks the same
 * question of many tools. compileBundle keeps one per frozen tool list, so compiling the same tools
 * again (a policy edit) runs no validator for what it found before. The tools still count as tried
 * (validatorOf) wherever they did, so the vectors chosen are the same either way.
 */
export class SchemaFindings {
  private readonly bySchema = new WeakMap<object, SchemaFinding>();

  /** The findings on the tool's input schema; null for a tool without one. */
  of(t: LoadedTool): SchemaFinding | null {
    const schema = t.inputSchema ?? t.def?.inputSchema;
    if (schema === null || typeof schema !== 'object') return null;
    let finding = this.bySchema.get(schema);
    if (finding === undefined) this.bySchema.set(schema, (finding = {}));
    return finding;
  }
}

type SchemaFinding = {
  judgedClean?: boolean;
  acceptsEmpty?: boolean;
  valid?: string | null;
  invalid?: [string, string][];
  smuggled?: string | null;
  failing?: string | null;
};

/** Whether the tool's input schema accepts `{}` (absent arguments); null for a tool without one. */
function acceptsNoArguments(t: LoadedTool, findings: SchemaFindings): boolean | null {
  const validate = validatorOf(t);
  if (!validate) return null;
  // A root `required` refuses `{}` whatever else the schema says, without its validator being compiled.
  const required = (t.inputSchema as { required?: unknown }).required;
  if (Array.isArray(required) && required.length > 0) return false;
  const finding = findings.of(t);
  if (finding?.acceptsEmpty !== undefined) return finding.acceptsEmpty;
  const ok = validate({}) === true;
  if (finding) finding.acceptsEmpty = ok;
  return ok;
}

const validArgumentsOf = new WeakMap<LoadedTool, string | null>();

/** JSON text of arguments the tool's input schema accepts, or null when none of the tries does. */
function validArguments(t: LoadedTool, findings: SchemaFindings): string | null {
  if (!validArgumentsOf.has(t)) validArgumentsOf.set(t, findValidArguments(t, findings));
  return validArgumentsOf.get(t)!;
}

function findValidArguments(t: LoadedTool, findings: SchemaFindings): string | null {
  const validate = validatorOf(t);
  if (!validate) return null;
  const finding = findings.of(t);
  if (finding?.valid !== undefined) return finding.valid;
  const valid = firstAccepted(t, validate);
  if (finding) finding.valid = valid;
  return valid;
}

function firstAccepted(t: LoadedTool, validate: NonNullable<LoadedTool['validateInput']>): string | null {
  const schema = t.def!.inputSchema as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  const tries: unknown[] = [{}];
  const filled: Record<string, unknown> = {};
  for (const name of schema.required ?? []) filled[name] = sample(schema.properties?.[name]);
  tries.push(filled);
  for (const args of tries) if (validate(args)) return JSON.stringify(args);
  return null;
}

// What a keyword can fail on: ajv applies these to one JSON type each (format to strings and, by
// ajv-formats' number formats, to numbers); type, enum and const to every value.
const ANY_VALUE_KEYWORDS = ['type', 'enum', 'const'];
const NUMBER_KEYWORDS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'format', ...ANY_VALUE_KEYWORDS]);
const STRING_KEYWORDS = new Set(['minLength', 'maxLength', 'pattern', 'format', ...ANY_VALUE_KEYWORDS]);
// Root keywords whose own failure ajv never reports (annotations; `properties` reports its subschemas').
const SILENT_KEYWORDS = new Set<string>([...ANNOTATION_KEYWORDS, '$schema', '$defs', 'definitions', 'properties']);

/**
 * Whether invalidArguments could find, for this schema, a failure of a kind outside `kinds`: read
 * off the schema without compiling it when that is sure, else true. Its tries change one thing of
 * arguments the schema accepts (or of `{}`): they drop a member, add one, set a typed property to a
 * value of another type (0 for a string, "x" otherwise) or pass `[]`. Values deeper than the top
 * level are left as the schema accepted them, so a failure is either of a root keyword or of a
 * keyword of that property's own subschema that applies to the value put there; and a value of
 * another type fails the property's `type` whatever else fails beside it, so alone it is a `type`
 * problem. Schemas with root keywords that apply subschemas to the whole object or to added
 * members are always asked; so are those outside what the judge vouches compiles without
 * compiling it, unless `compiles` says the judge compiled it (a schema that does not compile
 * fails every try on `schema`).
 */
export function mayFailAnew(schema: Record<string, unknown>, kinds: ReadonlySet<string>, compiles = false): boolean {
  return failureKindsUnseen(schema, kinds, true, compiles);
}

/**
 * mayFailAnew as the search for schema failures first read it, without the `type` argument: every
 * keyword of a typed property that applies to the value put there counted. The search still counts
 * the tools whose schemas this asks as tried (their validators first in the searches after it), so
 * the vectors chosen stay what they were.
 */
function searchedForFailures(schema: Record<string, unknown>, kinds: ReadonlySet<string>): boolean {
  return failureKindsUnseen(schema, kinds, false, false);
}

function failureKindsUnseen(schema: Record<string, unknown>, kinds: ReadonlySet<string>, typeFailsFirst: boolean, compiles: boolean): boolean {
  if (!compiles && keywordsCompilingUnseen(schema) === null) return true;
  if (schema.dependentSchemas !== undefined || schema.propertyNames !== undefined || schema.unevaluatedProperties !== undefined) return true;
  if (schema.additionalProperties !== undefined && typeof schema.additionalProperties !== 'boolean') return true;
  const unseen = (k: string) => !kinds.has(k);
  for (const k of Object.keys(schema)) if (!SILENT_KEYWORDS.has(k) && unseen(k)) return true;
  for (const prop of Object.values((schema.properties ?? {}) as Record<string, unknown>)) {
    if (prop === false && unseen('false schema')) return true;
    if (prop === null || typeof prop !== 'object') continue;
    const p = prop as Record<string, unknown>;
    const type = p.type;
    // Only a property with one type is set to a wrong value; the others keep an accepted one.
    if (typeof type !== 'string') continue;
    const refers = p.$ref !== undefined || p.$dynamicRef !== undefined || p.$recursiveRef !== undefined;
    if (typeFailsFirst && !refers) {
      if (unseen('type')) return true;
      continue;
    }
    const applies = type === 'string' ? NUMBER_KEYWORDS : STRING_KEYWORDS;
    for (const k of Object.keys(prop)) if (applies.has(k) && unseen(k)) return true;
  }
  return false;
}

/** JSON texts of arguments the input schema refuses with exactly one problem, by ajv keyword. */
export function invalidArguments(t: LoadedTool, findings: SchemaFindings = new SchemaFindings()): [string, string][] {
  const validate = validatorOf(t);
  if (!validate) return [];
  const finding = findings.of(t);
  if (finding?.invalid !== undefined) return finding.invalid;
  const invalid = refusedTries(t, validate, findings);
  if (finding) finding.invalid = invalid;
  return invalid;
}

function refusedTries(t: LoadedTool, validate: NonNullable<LoadedTool['validateInput']>, findings: SchemaFindings): [string, string][] {
  const schema = t.def!.inputSchema as { properties?: Record<string, Record<string, unknown>>; required?: string[]; additionalProperties?: unknown };
  const base = JSON.parse(validArguments(t, findings) ?? '{}') as Record<string, unknown>;
  const tries: unknown[] = [];
  for (const name of schema.required ?? []) {
    const { [name]: _gone, ...rest } = base;
    tries.push(rest);
  }
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    if (typeof prop?.type === 'string') tries.push({ ...base, [name]: prop.type === 'string' ? 0 : 'x' });
  }
  if (schema.additionalProperties === false) tries.push({ ...base, conformance_extra: 0 });
  tries.push([]);
  const out: [string, string][] = [];
  for (const args of tries) {
    if (!validate(args) && validate.errors?.length === 1) out.push([validate.errors[0].keyword, JSON.stringify(args)]);
  }
  return out;
}

/**
 * JSON text of arguments the input schema accepts although they hold a `connectionId` member
 * (R7.10), nested as deep as the schema lets one be (inside an array inside an object first, so
 * a reading that looks only at the top level fails too), or null when the schema refuses each.
 */
function smuggledArguments(t: LoadedTool, findings: SchemaFindings): string | null {
  const validate = validatorOf(t);
  if (!validate) return null;
  // The search may ask this of every tool of a large catalog.
  const finding = findings.of(t);
  if (finding?.smuggled !== undefined) return finding.smuggled;
  let found: string | null = null;
  // The schema as the definition has it (read without making the definition: searches ask this of every tool).
  const base = closedToMembers(t.inputSchema) ? null : (JSON.parse(validArguments(t, findings) ?? '{}') as unknown);
  if (typeof base === 'object' && base !== null && !Array.isArray(base)) {
    const member = { connectionId: 'no-conn' };
    const schema = t.inputSchema as { properties?: Record<string, Record<string, unknown>> };
    const extra = fresh('conformance_extra', (k) => Object.hasOwn(base, k) || Object.hasOwn(schema.properties ?? {}, k));
    const tries: unknown[] = [
      { ...base, [extra]: [member] },
      { ...base, [extra]: member },
    ];
    // Declared properties an open object or an array of them may stand in.
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      if (prop?.type === 'array') tries.push({ ...base, [name]: [member] });
      if (prop?.type === 'object' || prop?.$ref !== undefined) tries.push({ ...base, [name]: member });
    }
    tries.push({ ...base, ...member });
    for (const args of tries) {
      if (validate(args)) {
        found = JSON.stringify(args);
        break;
      }
    }
  }
  if (finding) finding.smuggled = found;
  return found;
}

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/**
 * True when no member named `connectionId` can pass the schema, read off the schema without
 * running it: no extra members (and no patterns naming some) and only scalar properties, where
 * nothing nests. (Save refuses a property of that name.) Otherwise, true when each of
 * smuggledArguments' tries is sure to be refused; else the validator is asked.
 */
function closedToMembers(schema: unknown): boolean {
  const s = schema as { additionalProperties?: unknown; patternProperties?: unknown; properties?: Record<string, { type?: unknown }> };
  if (s.additionalProperties !== false || s.patternProperties !== undefined) return false;
  for (const name in s.properties ?? {}) {
    const type = s.properties![name]?.type;
    if (typeof type !== 'string' || !SCALAR_TYPES.has(type)) return triesAllRefused(schema as Record<string, unknown>);
  }
  return true;
}

/**
 * Whether the schema, closed at its top level, refuses every try of smuggledArguments: a catalog
 * of closed schemas with nested objects would otherwise have each tool's validator compiled and
 * run, only to find none open. The members added at the top level are refused by the closed top
 * level; a property the tries fill with the member (an array of it, or it) must be one that
 * refuses it (refusesMember); properties neither array nor object nor `$ref` are not tried.
 */
function triesAllRefused(schema: Record<string, unknown>): boolean {
  if (!refusesMember(schema)) return false;
  const properties = schema.properties;
  if (properties === undefined) return true;
  if (properties === null || typeof properties !== 'object' || Array.isArray(properties)) return false;
  for (const prop of Object.values(properties as Record<string, unknown>)) {
    if (prop === null || typeof prop !== 'object' || Array.isArray(prop)) continue;
    const p = prop as Record<string, unknown>;
    if (p.$ref !== undefined) return false;
    if (p.type === 'object' && !refusesMember(p)) return false;
    // An array's elements are all judged by `items` only when no tuple keyword names positions.
    if (p.type === 'array' && (p.prefixItems !== undefined || Array.isArray(p.items) || !refusesMember(p.items))) return false;
  }
  return true;
}

/**
 * Whether a (sub)schema surely refuses the object `{"connectionId": …}`: the false schema, or one
 * whose extra members are refused outright (`additionalProperties: false`, no `patternProperties`,
 * no property of that name) and that refers to no other schema (its keywords all apply, and one fails).
 */
function refusesMember(schema: unknown): boolean {
  if (schema === false) return true;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return false;
  const s = schema as Record<string, unknown>;
  if (s.additionalProperties !== false || s.patternProperties !== undefined) return false;
  if (s.$ref !== undefined || s.$dynamicRef !== undefined || s.$recursiveRef !== undefined) return false;
  const properties = s.properties ?? {};
  return properties !== null && typeof properties === 'object' && !Object.hasOwn(properties, 'connectionId');
}

/** JSON text of arguments failing the schema elsewhere that also hold a top-level `connectionId`, or null. */
function failingWithMember(t: LoadedTool, findings: SchemaFindings): string | null {
  const validate = validatorOf(t);
  if (!validate) return null;
  const finding = findings.of(t);
  if (finding?.failing !== undefined) return finding.failing;
  let found: string | null = null;
  for (const [, text] of invalidArguments(t, findings)) {
    const bad = JSON.parse(text) as unknown;
    if (typeof bad !== 'object' || bad === null || Array.isArray(bad)) continue;
    const args = { ...bad, connectionId: 'no-conn' };
    // The vector pins the first problem: it must not be the member, which both readings name.
    const namesMember = (e: ErrorObject) =>
      e.instancePath.startsWith('/connectionId') || (e.keyword === 'additionalProperties' && e.params.additionalProperty === 'connectionId');
    if (!validate(args) && validate.errors?.length && !namesMember(validate.errors[0])) {
      found = JSON.stringify(args);
      break;
    }
  }
  if (finding) finding.failing = found;
  return found;
}

function sample(prop: Record<string, unknown> | boolean | undefined): unknown {
  // `true` accepts anything; `false` nothing, whatever is tried.
  if (prop === null || typeof prop !== 'object') return 'x';
  if (Array.isArray(prop.enum)) return prop.enum[0];
  if ('const' in prop) return prop.const;
  switch (prop.type) {
    case 'integer':
    case 'number':
      return typeof prop.minimum === 'number' ? prop.minimum : 1;
    case 'boolean':
      return true;
    case 'object':
      return {};
    case 'array':
      return [];
    default:
      return 'x'.repeat(typeof prop.minLength === 'number' ? prop.minLength : 1);
  }
}
