import { queryOptions, useQuery } from '@tanstack/react-query';
import type { McpServer } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export async function getMcpServers(): Promise<McpServer[]> {
  return (await api<{ items: McpServer[] }>('/v1/mcp-servers')).items;
}

export const mcpServersQueryOptions = () => queryOptions({ queryKey: ['mcp-servers'], queryFn: getMcpServers });

export function useMcpServers() {
  return useQuery(mcpServersQueryOptions());
}
