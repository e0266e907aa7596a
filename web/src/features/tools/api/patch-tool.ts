import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** JSON merge patch of one tool. */
export async function patchTool({ id, version, patch, reason }: { id: string; version?: number; patch: Partial<Tool>; reason?: string }): Promise<Tool> {
  return api<Tool>(`/v1/tools/${encodeURIComponent(id)}`, {
    method: 'PATCH',
    body: patch,
    ifMatch: version,
    reason,
  });
}

/** `tools` holds every selected tool as it is now (changed ones at their new version). */
export type BulkResult = { ok: string[]; failed: { id: string; error: unknown }[]; tools: Tool[] };

/**
 * One merge patch per selected tool (`change` answers null for a tool already as asked), each its
 * own request and audit event; a refusal of one does not stop the others.
 */
export async function bulkPatch({ tools, change, reason }: { tools: Tool[]; change: (t: Tool) => Partial<Tool> | null; reason: string }): Promise<BulkResult> {
  const result: BulkResult = { ok: [], failed: [], tools: [] };
  for (const t of tools) {
    const patch = change(t);
    if (!patch) {
      result.ok.push(t.id);
      result.tools.push(t);
      continue;
    }
    try {
      result.tools.push(await patchTool({ id: t.id, version: t.version, patch, reason }));
      result.ok.push(t.id);
    } catch (error) {
      result.failed.push({ id: t.id, error });
      result.tools.push(t);
    }
  }
  return result;
}

/** Adds a group to, or removes it from, each selected tool; every tool is its own request. */
export function bulkGroup({ tools, group, op, reason }: { tools: Tool[]; group: string; op: 'add' | 'remove'; reason?: string }): Promise<BulkResult> {
  return bulkPatch({
    tools,
    change: (t) => {
      const groups = t.groups ?? ['default'];
      const next = op === 'add' ? [...new Set([...groups, group])] : groups.filter((g) => g !== group);
      return next.length === groups.length && next.every((g, i) => g === groups[i]) ? null : { groups: next };
    },
    reason: reason?.trim() || `${op === 'add' ? 'Add to' : 'Remove from'} group ${group}`,
  });
}

/** Sets the redaction allowlist of each selected tool (the same fields kept for all). */
export function bulkRedaction({ tools, allow, reason }: { tools: Tool[]; allow: string[]; reason?: string }): Promise<BulkResult> {
  return bulkPatch({
    tools,
    change: (t) => (t.redaction && JSON.stringify(t.redaction.allow) === JSON.stringify(allow) ? null : { redaction: { allow } }),
    reason: reason?.trim() || `Set the redaction allowlist to ${allow.join(', ') || 'nothing'}`,
  });
}

/** Disables each selected tool: it leaves every bundle until enabled again. */
export function bulkDisable({ tools, reason }: { tools: Tool[]; reason?: string }): Promise<BulkResult> {
  return bulkPatch({ tools, change: (t) => (t.status === 'disabled' ? null : { status: 'disabled' }), reason: reason?.trim() || 'Disable in bulk' });
}

export function useBulkDisable() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: bulkDisable, onSettled: () => qc.invalidateQueries({ queryKey: ['tools'] }) });
}

export function useBulkRedaction() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: bulkRedaction, onSettled: () => qc.invalidateQueries({ queryKey: ['tools'] }) });
}

export function useBulkGroup() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: bulkGroup, onSettled: () => qc.invalidateQueries({ queryKey: ['tools'] }) });
}

/** One tool's merge patch, e.g. disabling it (approval is separate: it pins the reviewed definition). */
export function usePatchTool() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: patchTool, onSettled: () => qc.invalidateQueries({ queryKey: ['tools'] }) });
}
