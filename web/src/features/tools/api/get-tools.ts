import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Tool, ToolQuery } from '../../../../../policy-schemas/types.gen.ts';
import { api, query } from '../../../lib/api-client.ts';

export type ToolFilters = ToolQuery;

/** The inventory, filtered by the server. */
export async function getTools(filters: ToolFilters = {}): Promise<Tool[]> {
  const res = await api<{ items: Tool[] }>(`/v1/tools${query(filters)}`);
  return res.items;
}

export const toolsQueryOptions = (filters: ToolFilters = {}) =>
  queryOptions({ queryKey: ['tools', 'list', filters], queryFn: () => getTools(filters) });

export function useTools(filters: ToolFilters = {}) {
  return useQuery(toolsQueryOptions(filters));
}
