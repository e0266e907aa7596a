import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { McpServer } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export async function createMcpServer(server: McpServer): Promise<McpServer> {
  return api<McpServer>('/v1/mcp-servers', { method: 'POST', body: server });
}

export async function deleteMcpServer(server: McpServer): Promise<void> {
  await api<void>(`/v1/mcp-servers/${encodeURIComponent(server.id)}`, { method: 'DELETE', ifMatch: server.version });
}

/** Connects, lists the server's tools and imports changes (new and changed tools arrive quarantined). */
export async function syncMcpServer(id: string): Promise<McpServer> {
  return api<McpServer>(`/v1/mcp-servers/${encodeURIComponent(id)}/sync`, { method: 'POST', body: {} });
}

export function useCreateMcpServer() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: createMcpServer, onSuccess: () => qc.invalidateQueries({ queryKey: ['mcp-servers'] }) });
}

export function useDeleteMcpServer() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: deleteMcpServer, onSuccess: () => qc.invalidateQueries({ queryKey: ['mcp-servers'] }) });
}

export function useSyncMcpServer() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: syncMcpServer,
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: ['mcp-servers'] });
      void qc.invalidateQueries({ queryKey: ['tools'] });
    },
  });
}
