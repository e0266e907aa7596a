import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api-client.ts';

export async function deleteTool({ id, version }: { id: string; version?: number }): Promise<void> {
  await api<void>(`/v1/tools/${encodeURIComponent(id)}`, { method: 'DELETE', ifMatch: version });
}

export function useDeleteTool() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: deleteTool, onSuccess: () => qc.invalidateQueries({ queryKey: ['tools'] }) });
}
