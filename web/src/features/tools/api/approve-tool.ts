import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Tool, ToolApprove } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type ApprovalDecisions = Omit<ToolApprove, 'definitionHash'>;

/**
 * Approves a quarantined imported tool: pins its reviewed definition hash, makes it active and
 * applies the admin's decisions (effect, redaction, groups) in the same change.
 */
export async function approveTool({ tool, decisions }: { tool: Tool; decisions: ApprovalDecisions }): Promise<Tool> {
  return api<Tool>(`/v1/tools/${encodeURIComponent(tool.id)}/approve`, {
    method: 'POST',
    body: { definitionHash: tool.review?.current.definitionHash ?? tool.definitionHash, ...decisions },
    ifMatch: tool.version,
  });
}

export type BulkApproval = { approved: Tool[]; failed: { id: string; error: unknown }[] };

/** Approves several tools with the same decisions; each tool is its own request and may fail alone. */
export async function approveTools({ tools, decisions }: { tools: Tool[]; decisions: ApprovalDecisions }): Promise<BulkApproval> {
  const out: BulkApproval = { approved: [], failed: [] };
  for (const tool of tools) {
    try {
      out.approved.push(await approveTool({ tool, decisions }));
    } catch (error) {
      out.failed.push({ id: tool.id, error });
    }
  }
  return out;
}

export function useApproveTools() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: approveTools, onSettled: () => qc.invalidateQueries() });
}
