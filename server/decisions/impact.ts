import type { EvaluationRequest, ImpactCounts, ImpactKeyedCounts, ImpactReport, LoggedDecision } from '../../policy-schemas/types.gen.ts';
import { createView, type ToolView } from '../../runtime/decide.ts';
import { NOT_VISIBLE, REQUIRE_APPROVAL } from '../../runtime/evaluate.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import type { DbOrTx } from '../db/database.ts';
import { TurnBudget, nextTurn } from '../http/event-loop.ts';
import { groupedBySlice } from './decision-store.ts';
import { ConstraintImpact } from './constraint-impact.ts';

/** At most this many distinct requests are replayed; the most recent are kept. */
export const MAX_IMPACT_REQUESTS = 50_000;
export const DEFAULT_IMPACT_DAYS = 7;
/** Rows replayed between two turns of the event loop. */
export const YIELD_EVERY = 256;

export type ImpactWindow = { from: string; to: string; examples: number; maxRequests?: number; sliceRows?: number };

type Change = { subject: string; tool: string; from: LoggedDecision; to: LoggedDecision; reason?: string; calls: number; examples: EvaluationRequest[] };

/**
 * Whether a logged decision depends on the policy alone and so can be replayed. Calls refused for
 * their arguments or their connection cannot be: the log holds neither. Neither can a call denied
 * because the runtime held no bundle, nor an outcome a gateway added after the policy's answer.
 */
function replayable(errorCode: string | null, reason: string | null): boolean {
  if (errorCode === null || errorCode === 'unavailable') return true;
  return errorCode === 'policy_denied' && reason !== null && reason !== 'no_bundle';
}

/**
 * Replays the distinct evaluation requests logged in [from, to) against `loaded` (a draft) and
 * counts, per tool and per subject, the logged calls whose decision would change; and lists, per
 * tool, the argument constraints the draft adds or removes for those calls (constraint-impact.ts).
 */
export async function analyzeImpact(db: DbOrTx, tenant: string, loaded: LoadedBundle, w: ImpactWindow): Promise<ImpactReport> {
  const maxRequests = w.maxRequests ?? MAX_IMPACT_REQUESTS;
  // Grouped slice by slice (each query short, the event loop free between them), merged here.
  type Grouped = {
    request_hash: string;
    request: string;
    tool: string;
    decision: string;
    error_code: string | null;
    reason: string | null;
    bundle_version: number | null;
    n: number;
    last: number;
  };
  const merged = new Map<string, Grouped>();
  const slices = groupedBySlice(
    db,
    tenant,
    { from: w.from, to: w.to },
    (q) =>
      q
        .select((eb) => [
          'request_hash',
          eb.fn.max('request').as('request'),
          'tool',
          'decision',
          'error_code',
          'reason',
          'bundle_version',
          eb.fn.countAll<number>().as('n'),
          eb.fn.max('id').as('last'),
        ])
        .groupBy(['request_hash', 'tool', 'decision', 'error_code', 'reason', 'bundle_version'])
        .execute(),
    w.sliceRows,
  );
  for await (const slice of slices) {
    for (const r of slice) {
      const key = `${r.request_hash}\u0000${r.tool}\u0000${r.decision}\u0000${r.error_code}\u0000${r.reason}\u0000${r.bundle_version}`;
      const m = merged.get(key);
      if (m) {
        m.n += Number(r.n);
        m.last = Math.max(m.last, Number(r.last));
      } else {
        merged.set(key, {
          ...r,
          request: r.request as string,
          bundle_version: r.bundle_version === null ? null : Number(r.bundle_version),
          n: Number(r.n),
          last: Number(r.last),
        });
      }
    }
  }
  const rows = [...merged.values()];

  // The most recent distinct requests, when the window holds more than can be replayed.
  const lastByRequest = new Map<string, number>();
  for (const r of rows) lastByRequest.set(r.request_hash, Math.max(lastByRequest.get(r.request_hash) ?? 0, Number(r.last)));
  let kept: Set<string> | undefined;
  const truncated = lastByRequest.size > maxRequests;
  if (truncated) {
    kept = new Set(
      [...lastByRequest.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, maxRequests)
        .map(([h]) => h),
    );
  }

  const views = new Map<string, { request: EvaluationRequest; view: ToolView; reasons?: Map<string, string> }>();
  const requests = new Map<string, EvaluationRequest>();
  const constraintImpact = new ConstraintImpact(db, tenant, loaded);
  const changes = new Map<string, Change>();
  let calls = 0;
  let replayed = 0;
  let seen = 0;
  const budget = new TurnBudget();
  for (const r of rows) {
    // Replaying tens of thousands of requests takes seconds of CPU: give other requests (of every
    // tenant) their turn between slices rather than stall the server for the whole analysis.
    // Every YIELD_EVERY rows, and sooner when a stretch of new views (2,000 tools each) runs long.
    if (++seen % YIELD_EVERY === 0) await nextTurn();
    else await budget.yieldIfDue();
    if (kept && !kept.has(r.request_hash)) continue;
    const n = Number(r.n);
    calls += n;
    let request = requests.get(r.request_hash);
    if (!request) requests.set(r.request_hash, (request = JSON.parse(r.request as string) as EvaluationRequest));
    // Which constraints the draft adds or removes for these calls; and whether a constraint may have decided them.
    const nameLevel = await constraintImpact.note(request.subject, r.tool, r.bundle_version, r.decision, n);
    if (!replayable(r.error_code, r.reason) || !nameLevel) continue;
    replayed += n;
    let v = views.get(r.request_hash);
    if (!v) {
      v = { request, view: createView(loaded, request) };
      views.set(r.request_hash, v);
    }
    const tool = loaded.byId.get(r.tool);
    const position = tool ? v.view.decisions[tool.pos] : NOT_VISIBLE;
    const now: LoggedDecision = position === NOT_VISIBLE ? 'deny' : position === REQUIRE_APPROVAL ? 'require_approval' : 'allow';
    const was = r.decision as LoggedDecision;
    if (now === was) continue;
    let reason: string | undefined;
    if (now === 'deny') {
      if (!tool) reason = 'unavailable';
      else {
        v.reasons ??= new Map(v.view.result.filtered.map((f) => [f.id, f.reason]));
        reason = v.reasons.get(r.tool) ?? v.view.result.rejected?.reason;
      }
    }
    const key = `${v.request.subject}\u0000${r.tool}\u0000${was}\u0000${now}`;
    let c = changes.get(key);
    if (!c) {
      c = { subject: v.request.subject, tool: r.tool, from: was, to: now, calls: 0, examples: [] };
      if (reason) c.reason = reason;
      changes.set(key, c);
    }
    c.calls += n;
    if (c.examples.length < w.examples) c.examples.push(v.request);
  }

  const totals: ImpactCounts = { allowToDeny: 0, denyToAllow: 0, toApproval: 0, fromApproval: 0 };
  const byTool = new Map<string, ImpactKeyedCounts>();
  const bySubject = new Map<string, ImpactKeyedCounts>();
  const keyed = (m: Map<string, ImpactKeyedCounts>, key: string) => {
    let e = m.get(key);
    if (!e) m.set(key, (e = { key, allowToDeny: 0, denyToAllow: 0, toApproval: 0, fromApproval: 0 }));
    return e;
  };
  for (const c of changes.values()) {
    for (const counts of [totals, keyed(byTool, c.tool), keyed(bySubject, c.subject)]) {
      if (c.from === 'allow' && c.to === 'deny') counts.allowToDeny += c.calls;
      if (c.from === 'deny' && c.to === 'allow') counts.denyToAllow += c.calls;
      if (c.to === 'require_approval') counts.toApproval += c.calls;
      if (c.from === 'require_approval') counts.fromApproval += c.calls;
    }
  }
  const sum = (k: ImpactKeyedCounts) => k.allowToDeny + k.denyToAllow + k.toApproval + k.fromApproval;
  const ordered = (m: Map<string, ImpactKeyedCounts>) => [...m.values()].sort((a, b) => sum(b) - sum(a) || a.key.localeCompare(b.key));
  return {
    from: w.from,
    to: w.to,
    requests: kept ? kept.size : lastByRequest.size,
    calls,
    replayed,
    truncated,
    totals,
    changes: [...changes.values()].sort((a, b) => b.calls - a.calls || a.subject.localeCompare(b.subject) || a.tool.localeCompare(b.tool)),
    constraints: constraintImpact.report(),
    byTool: ordered(byTool),
    bySubject: ordered(bySubject),
  };
}
