// The console also runs this in the browser: no node: modules here.
import type {
  ConstraintRef,
  DecideExpectation,
  DecideVector,
  EvaluateExpectation,
  EvaluateVector,
  EvaluationRequest,
  EvaluationResult,
  VectorCall,
} from '../policy-schemas/types.gen.ts';
import { createView, decide } from './decide.ts';
import type { CallDecision, ToolView } from './decide.ts';
import { constraintsNaming } from './constraints.ts';
import { ALLOW, REQUIRE_APPROVAL, evaluateOnce, evaluateTools, subjectInfo } from './evaluate.ts';
import type { LoadedBundle } from './load-bundle.ts';

/** An evaluator under test: Toolgate's own, or a misreading of the spec. */
export type ConformanceSubject = {
  evaluate(request: EvaluationRequest): EvaluationResult;
  /**
   * Optional: evaluate's answer cut down to its envelope and the entries of the tools named, by
   * the same rules. A vector that expects only named tools (most of a large bundle's) is then
   * checked without listing the whole catalog: a runtime checks every vector on every load.
   */
  evaluateNamed?(request: EvaluationRequest, ids: readonly string[]): EvaluationResult;
  decide(request: EvaluationRequest, call: VectorCall): Pick<CallDecision, 'toolCallId' | 'decision' | 'errorCode' | 'errors'>;
};

/** The instant of a vector's request that names none (R12.4): fixed, so vectors never depend on the clock. */
export const CONFORMANCE_AT = '2000-01-01T00:00:00.000Z';

/** A vector's request as evaluated: at CONFORMANCE_AT unless it names its own instant. */
export function vectorRequest(request: EvaluationRequest): EvaluationRequest {
  return request.at === undefined ? { ...request, at: CONFORMANCE_AT } : request;
}

/** One vector an implementation does not reproduce, and how its answer differs. */
export type ConformanceFailure = { index: number; rules: string[]; problem: string };

/** The runtime's own evaluate and decide over a loaded bundle. */
export function runtimeSubject(loaded: LoadedBundle): ConformanceSubject {
  return {
    evaluate: (request) => evaluateOnce(loaded, request),
    evaluateNamed: (request, ids) => {
      const { envelope, outcomes } = evaluateTools(loaded, request, ids);
      const named = [...outcomes.keys()].sort((a, b) => (loaded.byId.get(a)?.pos ?? 0) - (loaded.byId.get(b)?.pos ?? 0));
      const tools: EvaluationResult['tools'] = [];
      const filtered: EvaluationResult['filtered'] = [];
      const subject = named.length > 0 ? subjectInfo(loaded, request.subject) : null;
      for (const id of named) {
        const o = outcomes.get(id)!;
        if ('decision' in o) {
          // R6.16: a visible tool carries the constraints that name it, as evaluate's whole answer does.
          const constraints = constraintsNaming(loaded, subject!, loaded.byId.get(id)!.pos);
          tools.push(constraints === undefined ? { id, decision: o.decision } : { id, decision: o.decision, constraints: [...constraints] });
        } else filtered.push({ id, reason: o.reason });
      }
      return { ...envelope, tools, filtered };
    },
    decide: (request, call) => decide(namedToolView(loaded, request, call.name), call),
  };
}

/**
 * The view decide() reads for a call on one tool, by evaluate's own checks on that tool alone
 * (evaluateTools): decide looks up the called tool's position and nothing else of the answer, and
 * a runtime checks every decide vector on every load, each with its own request. The whole answer
 * is still there, made only if something asks for it.
 */
function namedToolView(loaded: LoadedBundle, request: EvaluationRequest, name: unknown): ToolView {
  const ids = typeof name === 'string' && loaded.byId.has(name) ? [name] : [];
  const { outcomes, atMs, subject } = evaluateTools(loaded, request, ids);
  const decisions = new Uint8Array(loaded.tools.length);
  for (const [id, o] of outcomes) {
    if ('decision' in o) decisions[loaded.byId.get(id)!.pos] = o.decision === 'allow' ? ALLOW : REQUIRE_APPROVAL;
  }
  let whole: ToolView | undefined;
  return {
    loaded,
    request,
    get result() {
      whole ??= createView(loaded, request);
      return whole.result;
    },
    decisions,
    atMs,
    subject,
    allowedConnectionIds: request.allowedConnectionIds === undefined ? undefined : new Set(request.allowedConnectionIds),
  };
}

/**
 * Runs a bundle's conformance vectors (docs/spec.md §12) against an implementation and answers the
 * ones it fails, at most `limit`; an implementation that throws fails that vector.
 *
 * @example
 *   const failures = conformanceFailures(bundle.conformance, runtimeSubject(loaded));
 */
export function conformanceFailures(vectors: readonly (EvaluateVector | DecideVector)[], subject: ConformanceSubject, limit = Infinity): ConformanceFailure[] {
  const out: ConformanceFailure[] = [];
  for (let i = 0; i < vectors.length && out.length < limit; i++) {
    const v = vectors[i];
    let problem: string | null;
    try {
      const request = vectorRequest(v.request);
      problem =
        'call' in v ? decideMismatch(v.call, v.expect, subject.decide(request, v.call)) : evaluateMismatch(v.expect, answerFor(subject, request, v.expect));
    } catch (err) {
      problem = `throws: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (problem !== null) out.push({ index: i, rules: v.rules, problem });
  }
  return out;
}

/** The answer a vector is checked against: the whole of it unless the vector names tools only. */
function answerFor(subject: ConformanceSubject, request: EvaluationRequest, e: EvaluateExpectation): EvaluationResult {
  const whole = e.visible !== undefined || e.visibleCount !== undefined || e.filteredOrder !== undefined || e.rejected === true;
  if (whole || subject.evaluateNamed === undefined) return subject.evaluate(request);
  return subject.evaluateNamed(request, [...Object.keys(e.hidden ?? {}), ...Object.keys(e.decisions ?? {}), ...Object.keys(e.constraints ?? {})]);
}

/** What differs between an evaluate() answer and a vector's partial expectation, or null. */
export function evaluateMismatch(expect: EvaluateExpectation, got: EvaluationResult): string | null {
  if (expect.roles !== undefined && !sameList(expect.roles, got.roles)) return `roles are ${show(got.roles)}, expected ${show(expect.roles)}`;
  if (expect.groups !== undefined && !sameList(expect.groups, got.groups)) return `groups are ${show(got.groups)}, expected ${show(expect.groups)}`;
  if (expect.state !== undefined && expect.state !== got.state) return `state is ${show(got.state)}, expected ${show(expect.state)}`;
  if (expect.rejected !== undefined && expect.rejected !== (got.rejected !== undefined)) {
    return expect.rejected ? 'the request is not rejected' : `the request is rejected (${show(got.rejected?.groups)})`;
  }
  // A rejected answer lists no tool at all and names its one reason.
  if (expect.rejected === true && (got.tools.length > 0 || got.filtered.length > 0 || got.rejected?.reason !== 'group_not_permitted')) {
    return 'the rejected answer lists tools or gives another reason than group_not_permitted';
  }
  if (expect.visibleCount !== undefined && got.tools.length !== expect.visibleCount)
    return `${got.tools.length} tools are visible, expected ${expect.visibleCount}`;
  if (expect.rejectedGroups !== undefined && !sameList(expect.rejectedGroups, got.rejected?.groups ?? [])) {
    return `the rejection names ${show(got.rejected?.groups ?? [])}, expected ${show(expect.rejectedGroups)}`;
  }
  // Positions of the ids the expectation names only: an answer lists every catalog tool, and a
  // bundle's vectors are checked on every load.
  const named = new Set<string>([
    ...(expect.visible ?? []),
    ...(expect.filteredOrder ?? []),
    ...Object.keys(expect.hidden ?? {}),
    ...Object.keys(expect.decisions ?? {}),
    ...Object.keys(expect.constraints ?? {}),
  ]);
  const visibleAt = positionsOf(got.tools, named);
  const filteredAt = positionsOf(got.filtered, named);
  const outcome = (id: string) => {
    const v = visibleAt.get(id);
    if (v !== undefined) return `visible (${got.tools[v].decision})`;
    const f = filteredAt.get(id);
    return f !== undefined ? `filtered as ${got.filtered[f].reason}` : 'absent';
  };
  if (expect.visible !== undefined) {
    let last = -1;
    for (const id of expect.visible) {
      const at = visibleAt.get(id);
      if (at === undefined) return `${id} is ${outcome(id)}, expected visible`;
      if (at < last) return `${id} comes too early in tools`;
      last = at;
    }
  }
  for (const [id, reason] of Object.entries(expect.hidden ?? {})) {
    const at = filteredAt.get(id);
    if (at === undefined || got.filtered[at].reason !== reason) return `${id} is ${outcome(id)}, expected filtered as ${reason}`;
  }
  for (const [id, decision] of Object.entries(expect.decisions ?? {})) {
    const at = visibleAt.get(id);
    if (at === undefined || got.tools[at].decision !== decision) return `${id} is ${outcome(id)}, expected visible (${decision})`;
  }
  for (const [id, constraints] of Object.entries(expect.constraints ?? {})) {
    const at = visibleAt.get(id);
    if (at === undefined) return `${id} is ${outcome(id)}, expected visible with constraints ${show(constraints)}`;
    const reported = got.tools[at].constraints;
    if (!sameConstraints(reported ?? [], constraints)) return `${id} carries constraints ${show(reported ?? [])}, expected ${show(constraints)}`;
    // R6.16: a tool no constraint names has no constraints member at all.
    if (constraints.length === 0 && reported !== undefined) return `${id} carries an empty constraints member, expected none`;
  }
  if (expect.filteredOrder !== undefined) {
    let last = -1;
    for (const id of expect.filteredOrder) {
      const at = filteredAt.get(id);
      if (at === undefined) return `${id} is ${outcome(id)}, expected filtered`;
      if (at < last) return `${id} comes too early in filtered`;
      last = at;
    }
  }
  return null;
}

/** What differs between a decide() answer and a vector's expectation, or null. */
export function decideMismatch(
  call: VectorCall,
  expect: DecideExpectation,
  got: Pick<CallDecision, 'toolCallId' | 'decision' | 'errorCode' | 'errors'>,
): string | null {
  if (call.toolCallId === undefined ? typeof got.toolCallId !== 'string' || !UUID.test(got.toolCallId) : got.toolCallId !== call.toolCallId) {
    return `toolCallId is ${show(got.toolCallId)}, expected ${call.toolCallId === undefined ? 'a new UUID' : show(call.toolCallId)}`;
  }
  if (got.decision !== expect.decision || got.errorCode !== expect.errorCode) {
    return `decided ${got.decision}${got.errorCode ? ` (${got.errorCode})` : ''}, expected ${expect.decision}${expect.errorCode ? ` (${expect.errorCode})` : ''}`;
  }
  const pointers = new Set((got.errors ?? []).map((e) => e.pointer));
  for (const p of expect.pointers ?? []) if (!pointers.has(p)) return `the validation errors do not point at ${show(p)}`;
  return null;
}

/** The position of each entry whose id is in `ids` (the first, should an id appear twice). */
function positionsOf(entries: readonly { id: string }[], ids: ReadonlySet<string>): Map<string, number> {
  const at = new Map<string, number>();
  if (ids.size === 0) return at;
  for (let i = 0; i < entries.length; i++) {
    const id = entries[i].id;
    if (ids.has(id) && !at.has(id)) at.set(id, i);
  }
  return at;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameConstraints(a: readonly ConstraintRef[], b: readonly ConstraintRef[]): boolean {
  return (
    a.length === b.length && a.every((x, i) => x.role === b[i].role && x.index === b[i].index && x.otherwise === b[i].otherwise && x.reason === b[i].reason)
  );
}

function show(v: unknown): string {
  return JSON.stringify(v);
}
