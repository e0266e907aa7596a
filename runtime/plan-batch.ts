import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.ts';
import { decide } from './decide.ts';
import type { CallDecision, ToolCall, ToolView } from './decide.ts';

export type PlannedCall = { toolCallId: string; name: string; decision: 'allow' | 'require_approval' };

/** One step of a batch: its calls may run at the same time; steps run one after another. */
export type PlanGroup = { parallel: boolean; calls: PlannedCall[] };

export type BatchPlan = { rejected: CallDecision[]; groups: PlanGroup[] };

/**
 * Orders a batch of model tool calls: rejected calls first (with their decision), then groups in
 * call order. Consecutive parallel-safe calls share a group while their resource keys differ; a
 * repeated resource key starts a new group (serializes); a call that is not parallel-safe runs
 * alone. The same view and calls always give the same plan (missing ids are derived, not random).
 */
export function planBatch(view: ToolView, calls: readonly ToolCall[]): BatchPlan {
  const rejected: CallDecision[] = [];
  const groups: PlanGroup[] = [];
  let open: PlanGroup | null = null;
  let openKeys = new Set<string>();
  calls.forEach((call, i) => {
    const toolCallId = call.toolCallId || derivedCallId(i, call);
    const d = decide(view, { ...call, toolCallId });
    if (d.decision === 'deny') {
      rejected.push(d);
      return;
    }
    const planned: PlannedCall = { toolCallId, name: call.name, decision: d.decision };
    const parallel = view.loaded.byId.get(call.name)?.def?.parallel;
    if (!parallel?.safe) {
      open = null;
      groups.push({ parallel: false, calls: [planned] });
      return;
    }
    const key = parallel.resourceKey;
    if (open === null || (key !== undefined && openKeys.has(key))) {
      open = { parallel: true, calls: [] };
      openKeys = new Set();
      groups.push(open);
    }
    open.calls.push(planned);
    if (key !== undefined) openKeys.add(key);
  });
  return { rejected, groups };
}

// A stable id from the call's position and content, shaped like a UUID.
function derivedCallId(index: number, call: ToolCall): string {
  const h = createHash('sha256')
    .update(canonicalJson({ index, name: call.name, arguments: call.arguments ?? null }))
    .digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
