import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** Creates a tool (POST) or replaces it (PUT with If-Match of the version it was based on). */
export async function saveTool({ tool, create, reason }: { tool: Tool; create: boolean; reason?: string }): Promise<Tool> {
  if (create) return api<Tool>('/v1/tools', { method: 'POST', body: tool, reason });
  return api<Tool>(`/v1/tools/${encodeURIComponent(tool.id)}`, { method: 'PUT', body: tool, ifMatch: tool.version, reason });
}

export function useSaveTool() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: saveTool,
    onSuccess: (tool) => {
      qc.setQueryData(['tools', 'detail', tool.id], tool);
      void qc.invalidateQueries({ queryKey: ['tools'] });
    },
  });
}
