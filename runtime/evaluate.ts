// The console also runs this in the browser: no node: modules here.
import type { EvaluationRequest, EvaluationResult, FilterReason } from '../policy-schemas/types.gen.ts';
import { constrainedEntries } from './constraints.ts';
import type { Effect, LoadedBundle, LoadedGrant, LoadedTool, SubjectInfo } from './load-bundle.ts';

/** evaluate()'s answer plus, per tool position, 0 (not visible), 1 (allow) or 2 (require approval). */
export type Evaluation = { readonly result: EvaluationResult; readonly decisions: Uint8Array; readonly atMs: number; readonly subject: SubjectInfo };

/** Per-position decisions of an evaluation. */
export const NOT_VISIBLE = 0;
export const ALLOW = 1;
export const REQUIRE_APPROVAL = 2;
const MAX_MEMO_ENTRIES = 4096;
const EMPTY: readonly never[] = Object.freeze([]);
type Decision = 'allow' | 'require_approval';
type ToolEntry = EvaluationResult['tools'][number];

/**
 * Which tools a request sees and why every other tool is hidden: DESIGN.md "Semantics".
 * Pure over the loaded bundle; repeated requests are answered from a cache (frozen results).
 *
 * @example
 *   evaluate(loaded, { subject: 'agent:support-bot', groups: ['knowledge'], state: 'analysis' })
 */
export function evaluate(loaded: LoadedBundle, request: EvaluationRequest): EvaluationResult {
  return evaluateDetailed(loaded, request).result;
}

/** evaluate() with the per-position decisions the call-time functions need. */
export function evaluateDetailed(loaded: LoadedBundle, request: EvaluationRequest): Evaluation {
  if (!request || typeof request.subject !== 'string') throw new TypeError('request.subject must be a string');
  const memo = loaded.memo;
  const hit = memo.results.get(request);
  // A hit at an explicit instant is the very evaluation made at that instant: answered as it is.
  if (hit !== undefined) {
    if (request.at !== undefined) return hit.evaluation;
    const now = Date.now();
    if (now < hit.validUntil) return { result: hit.evaluation.result, decisions: hit.evaluation.decisions, atMs: now, subject: hit.evaluation.subject };
  }
  const explicitAt = request.at !== undefined;
  const atMs = explicitAt ? Date.parse(request.at as string) : Date.now();
  const subject = subjectInfo(loaded, request.subject);
  const { result, decisions } = compute(loaded, request, subject, atMs);
  const evaluation: Evaluation = Object.freeze({ result, decisions, atMs, subject });
  memo.results.set(request, evaluation, explicitAt ? Infinity : nextExpiry(loaded, atMs));
  return evaluation;
}

/**
 * True exactly when no role of the subject denies the tool and some role allows it: the question
 * the bundle's Casbin model answers with `enforce(subject, tenant, toolId, "call")`.
 */
export function policyAllows(loaded: LoadedBundle, subject: string, toolId: string): boolean {
  const tool = loaded.byId.get(toolId);
  if (!tool) return false;
  return subjectInfo(loaded, subject).policy[tool.pos] === 0;
}

/** The connection ids a subject may use with a tool at an instant, within `allowed` when given. */
export function grantedConnections(subject: SubjectInfo, tool: LoadedTool, atMs: number, allowed: ReadonlySet<string> | undefined): string[] {
  const out: string[] = [];
  for (const g of subject.grants) if (grantApplies(g, tool.pos, atMs, allowed)) out.push(g.connectionId);
  return out;
}

/** What a request fixes for every tool: the bundle, masks, facts, profile and connections. */
type Context = {
  tools: readonly LoadedTool[];
  groups: Uint8Array;
  states: Uint8Array;
  policy: Uint8Array;
  facts: Readonly<Record<string, string | number | boolean>>;
  profile: { enable: ReadonlySet<string>; disable: ReadonlySet<string> } | undefined;
  scoped: Uint8Array;
  grants: readonly LoadedGrant[];
  atMs: number;
  allowedIds: ReadonlySet<string> | undefined;
};

/** The answer's envelope, and a context for the per-tool checks unless the request is refused as a whole. */
function begin(
  loaded: LoadedBundle,
  request: EvaluationRequest,
  subject: SubjectInfo,
  atMs: number,
): { envelope: Omit<EvaluationResult, 'tools' | 'filtered'>; noRole: boolean; ctx: Context | null } {
  const requested = request.groups ?? ['default'];
  const groups = groupMask(loaded, requested);
  const state = request.state ?? 'undefined';
  const roles = subject.roles;
  if (roles.length === 0) return { envelope: { roles: [], groups: groups.expanded, state }, noRole: true, ctx: null };
  if (!subject.permitsAnyGroup) {
    const refused: string[] = [];
    for (const g of requested) if (!subject.permittedGroups.has(g) && !refused.includes(g)) refused.push(g);
    if (refused.length > 0) {
      return {
        envelope: { roles: [...roles], groups: groups.expanded, state, rejected: { reason: 'group_not_permitted', groups: refused } },
        noRole: false,
        ctx: null,
      };
    }
  }
  const ctx: Context = {
    tools: loaded.tools,
    groups: groups.mask,
    states: stateMask(loaded, state),
    policy: subject.policy,
    facts: request.facts ?? {},
    // An unknown profile name is no profile: profile-scoped tools stay hidden, nothing else changes.
    profile: request.profile === undefined ? undefined : loaded.profiles.get(request.profile),
    scoped: loaded.profileScoped,
    grants: subject.grants,
    atMs,
    allowedIds: request.allowedConnectionIds === undefined ? undefined : new Set(request.allowedConnectionIds),
  };
  return { envelope: { roles: [...roles], groups: groups.expanded, state }, noRole: false, ctx };
}

/** The first check tool `i` fails, in the order of DESIGN.md "Semantics" step 3, or undefined when it is visible. */
function reasonAt(c: Context, i: number): FilterReason | undefined {
  const t = c.tools[i];
  if (t.excluded !== null) return t.excluded;
  if (c.groups[i] === 0) return 'group';
  if (c.states[i] === 0) return 'state';
  if (c.policy[i] === 1) return 'denied';
  if (c.policy[i] === 2) return 'not_allowed';
  if (t.requires.length > 0 && !gatesPass(t, c.facts)) return 'runtime_gate';
  if (c.profile === undefined ? c.scoped[i] === 1 : c.profile.disable.has(t.id) || (c.scoped[i] === 1 && !c.profile.enable.has(t.id))) return 'profile';
  if (t.requiresConnection && !hasConnection(c.grants, i, c.atMs, c.allowedIds)) return 'no_connection';
  return undefined;
}

/**
 * evaluate()'s answer made afresh: nothing cached, and no entry made to be kept on the tools. A
 * runtime's load-time conformance check asks each of its requests once; kept, their answers and a
 * shared entry for every catalog tool would outlive the check in the loaded bundle's memory.
 */
export function evaluateOnce(loaded: LoadedBundle, request: EvaluationRequest): EvaluationResult {
  if (!request || typeof request.subject !== 'string') throw new TypeError('request.subject must be a string');
  const atMs = request.at !== undefined ? Date.parse(request.at) : Date.now();
  return compute(loaded, request, subjectInfo(loaded, request.subject), atMs, false).result;
}

function compute(
  loaded: LoadedBundle,
  request: EvaluationRequest,
  subject: SubjectInfo,
  atMs: number,
  // Whether answer entries are the tools' shared frozen ones (evaluate), or made for this answer alone.
  shared = true,
): { result: EvaluationResult; decisions: Uint8Array } {
  const tools = loaded.tools;
  const decisions = new Uint8Array(tools.length);
  const { envelope, noRole, ctx } = begin(loaded, request, subject, atMs);
  const filteredAs = shared ? filteredEntry : (t: LoadedTool, reason: FilterReason) => Object.freeze({ id: t.id, reason });
  const visibleAs = shared
    ? (t: LoadedTool, decision: Decision) => t.entries[decision]
    : (t: LoadedTool, decision: Decision): ToolEntry => Object.freeze({ id: t.id, decision });
  if (noRole) return { result: freezeResult({ ...envelope, tools: [], filtered: tools.map((t) => filteredAs(t, 'no_role')) }), decisions };
  if (ctx === null) return { result: freezeResult({ ...envelope, tools: [], filtered: [] }), decisions };
  const approval = subject.requireApproval;
  // Step 4: a visible tool that constraints of the subject's roles name reports them.
  const constrained = constrainedEntries(loaded, subject);
  const visible: EvaluationResult['tools'] = [];
  const filtered: EvaluationResult['filtered'] = [];
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i];
    const reason = reasonAt(ctx, i);
    if (reason !== undefined) {
      filtered.push(filteredAs(t, reason));
    } else if (asksApproval(approval, t)) {
      decisions[i] = REQUIRE_APPROVAL;
      visible.push(constrained ? constrained(t, 'require_approval') : visibleAs(t, 'require_approval'));
    } else {
      decisions[i] = ALLOW;
      visible.push(constrained ? constrained(t, 'allow') : visibleAs(t, 'allow'));
    }
  }
  return { result: freezeResult({ ...envelope, tools: visible, filtered }), decisions };
}

/**
 * evaluate()'s answer for a few tools only: the envelope, and per named tool its decision or
 * reason, without walking the whole catalog (the compiler pins conformance vectors with it).
 */
export function evaluateTools(
  loaded: LoadedBundle,
  request: EvaluationRequest,
  ids: readonly string[],
): {
  envelope: Omit<EvaluationResult, 'tools' | 'filtered'>;
  outcomes: Map<string, { decision: 'allow' | 'require_approval' } | { reason: FilterReason }>;
  atMs: number;
  subject: SubjectInfo;
} {
  const atMs = request.at !== undefined ? Date.parse(request.at) : Date.now();
  const subject = subjectInfo(loaded, request.subject);
  const { envelope, noRole, ctx } = begin(loaded, request, subject, atMs);
  const outcomes = new Map<string, { decision: 'allow' | 'require_approval' } | { reason: FilterReason }>();
  for (const id of ids) {
    const t = loaded.byId.get(id);
    if (!t || (!noRole && ctx === null)) continue;
    const reason = noRole ? 'no_role' : reasonAt(ctx!, t.pos);
    if (reason !== undefined) outcomes.set(id, { reason });
    else outcomes.set(id, { decision: asksApproval(subject.requireApproval, t) ? 'require_approval' : 'allow' });
  }
  return { envelope, outcomes, atMs, subject };
}

/** What evaluate()'s answer to a request holds, in brief: see evaluationOutline. */
export type EvaluationOutline = {
  /** The request is refused as a whole (its answer has `rejected`). */
  readonly rejected: boolean;
  /** The reasons of the answer's `filtered`, and whether one ever comes after a greater one (UTF-16 order). */
  readonly reasons: ReadonlySet<FilterReason>;
  readonly reasonsDescend: boolean;
  /** The decisions of the answer's `tools`. */
  readonly decisions: ReadonlySet<'allow' | 'require_approval'>;
  /** Catalog positions of the answer's first `visibleLimit` tools, in order. */
  readonly firstVisible: readonly number[];
};

/**
 * An outline of evaluate()'s answer, by the same checks, without building the answer or caching
 * it: the compiler scores many candidate requests over the whole catalog to choose one
 * conformance vector, and evaluates only the one it keeps.
 */
export function evaluationOutline(loaded: LoadedBundle, request: EvaluationRequest, visibleLimit: number): EvaluationOutline {
  if (!request || typeof request.subject !== 'string') throw new TypeError('request.subject must be a string');
  const atMs = request.at !== undefined ? Date.parse(request.at) : Date.now();
  const subject = subjectInfo(loaded, request.subject);
  const { noRole, ctx } = begin(loaded, request, subject, atMs);
  const reasons = new Set<FilterReason>();
  const decisions = new Set<'allow' | 'require_approval'>();
  const firstVisible: number[] = [];
  const tools = loaded.tools;
  if (noRole) {
    if (tools.length > 0) reasons.add('no_role');
    return { rejected: false, reasons, reasonsDescend: false, decisions, firstVisible };
  }
  if (ctx === null) return { rejected: true, reasons, reasonsDescend: false, decisions, firstVisible };
  const approval = subject.requireApproval;
  let previous: FilterReason | undefined;
  let reasonsDescend = false;
  for (let i = 0; i < tools.length; i++) {
    const reason = reasonAt(ctx, i);
    if (reason !== undefined) {
      reasons.add(reason);
      if (previous !== undefined && previous > reason) reasonsDescend = true;
      previous = reason;
    } else {
      decisions.add(asksApproval(approval, tools[i]) ? 'require_approval' : 'allow');
      if (firstVisible.length < visibleLimit) firstVisible.push(i);
    }
  }
  return { rejected: false, reasons, reasonsDescend, decisions, firstVisible };
}

/** Whether a visible tool is require_approval: its effect is one the subject's roles ask approval for. */
function asksApproval(requireApproval: ReadonlySet<Effect>, t: LoadedTool): boolean {
  return requireApproval.has(t.effect as Effect);
}

function gatesPass(t: LoadedTool, facts: Readonly<Record<string, string | number | boolean>>): boolean {
  for (const gate of t.requires) {
    if (!Object.hasOwn(facts, gate.fact) || !gate.in.includes(facts[gate.fact])) return false;
  }
  return true;
}

function hasConnection(grants: readonly LoadedGrant[], pos: number, atMs: number, allowed: ReadonlySet<string> | undefined): boolean {
  for (const g of grants) if (grantApplies(g, pos, atMs, allowed)) return true;
  return false;
}

function grantApplies(g: LoadedGrant, pos: number, atMs: number, allowed: ReadonlySet<string> | undefined): boolean {
  return g.tools[pos] === 1 && atMs < g.expiresMs && (allowed === undefined || allowed.has(g.connectionId));
}

function filteredEntry(t: LoadedTool, reason: FilterReason): EvaluationResult['filtered'][number] {
  let e = t.entries.filtered[reason];
  if (!e) {
    e = Object.freeze({ id: t.id, reason });
    t.entries.filtered[reason] = e;
  }
  return e;
}

/** The subject's roles, permitted groups, per-tool allow/deny verdict, approvals and grants, memoised. */
export function subjectInfo(loaded: LoadedBundle, subject: string): SubjectInfo {
  const memo = loaded.memo.subjects;
  let info = memo.get(subject);
  if (info) return info;
  const roles = loaded.bindings.get(subject) ?? EMPTY;
  const n = loaded.tools.length;
  const allowed = new Uint8Array(n);
  const denied = new Uint8Array(n);
  const permittedGroups = new Set<string>();
  const requireApproval = new Set<Effect>();
  let permitsAnyGroup = false;
  for (const name of roles) {
    const role = loaded.roles.get(name);
    if (!role) continue;
    if (role.permitsAnyGroup) permitsAnyGroup = true;
    for (const g of role.groups) permittedGroups.add(g);
    for (const e of role.requireApproval) requireApproval.add(e);
    for (let i = 0; i < n; i++) {
      allowed[i] |= role.allow[i];
      denied[i] |= role.deny[i];
    }
  }
  const policy = new Uint8Array(n);
  for (let i = 0; i < n; i++) policy[i] = denied[i] ? 1 : allowed[i] ? 0 : 2;
  const principals = new Set<string>([subject, ...roles]);
  const grants = loaded.grants.filter((g) => [...g.subjects].some((s) => principals.has(s)));
  info = { roles: Object.freeze([...roles]), permitsAnyGroup, permittedGroups, policy, requireApproval, grants };
  if (memo.size >= MAX_MEMO_ENTRIES) memo.clear();
  memo.set(subject, info);
  return info;
}

/** The requested groups expanded through `includes`, sorted, and which tools are in them. */
function groupMask(loaded: LoadedBundle, requested: readonly string[]): { expanded: string[]; mask: Uint8Array } {
  const memo = loaded.memo.groupMasks;
  const key = requested.join('\u0000');
  let entry = memo.get(key);
  if (entry) return entry;
  const expanded = new Set<string>();
  for (const g of requested) for (const x of loaded.groupClosure.get(g) ?? [g]) expanded.add(x);
  const n = loaded.tools.length;
  const mask = new Uint8Array(n);
  if (expanded.has('*')) mask.fill(1);
  else {
    for (const g of expanded) {
      const bits = loaded.groupBits.get(g);
      if (bits) for (let i = 0; i < n; i++) mask[i] |= bits[i];
    }
  }
  entry = { expanded: Object.freeze([...expanded].sort()) as string[], mask };
  if (memo.size >= MAX_MEMO_ENTRIES) memo.clear();
  memo.set(key, entry);
  return entry;
}

function stateMask(loaded: LoadedBundle, state: string): Uint8Array {
  const memo = loaded.memo.stateMasks;
  let mask = memo.get(state);
  if (mask) return mask;
  mask = loaded.stateBits.get(state) ?? loaded.allStateBits;
  if (memo.size >= MAX_MEMO_ENTRIES) memo.clear();
  memo.set(state, mask);
  return mask;
}

function nextExpiry(loaded: LoadedBundle, atMs: number): number {
  for (const ms of loaded.expiryInstants) if (ms > atMs) return ms;
  return Infinity;
}

function freezeResult(r: EvaluationResult): EvaluationResult {
  Object.freeze(r.roles);
  Object.freeze(r.groups);
  Object.freeze(r.tools);
  Object.freeze(r.filtered);
  if (r.rejected) Object.freeze(Object.freeze(r.rejected).groups);
  return Object.freeze(r);
}
