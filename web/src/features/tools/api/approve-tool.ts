import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** Approves a quarantined imported tool: pins its reviewed definition hash and makes it active. */
/** If-Match is the version the reviewer saw. */
export async function approveTool({ id, version, definitionHash, reason }: { id: string; version?: number; definitionHash?: string; reason?: string }): Promise<Tool> {
  return api<Tool>(`/v1/tools/${encodeURIComponent(id)}/approve`, {
    method: 'POST',
    body: definitionHash ? { definitionHash } : {},
    ifMatch: version,
    reason,
  });
}

export function useApproveTool() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: approveTool, onSettled: () => qc.invalidateQueries({ queryKey: ['tools'] }) });
}
