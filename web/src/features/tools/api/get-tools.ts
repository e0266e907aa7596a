import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type { Tool, ToolList, ToolQuery } from '../../../../../policy-schemas/types.gen.ts';
import { api, query } from '../../../lib/api-client.ts';

export type ToolFilters = Omit<ToolQuery, 'limit' | 'cursor'>;

/** The whole inventory (filtered by the server), for pickers that need every id. */
export async function getTools(filters: ToolFilters = {}): Promise<Tool[]> {
  const res = await api<ToolList>(`/v1/tools${query(filters)}`);
  return res.items;
}

export const toolsQueryOptions = (filters: ToolFilters = {}) => queryOptions({ queryKey: ['tools', 'list', filters], queryFn: () => getTools(filters) });

export function useTools(filters: ToolFilters = {}) {
  return useQuery(toolsQueryOptions(filters));
}

/** One page of the inventory: search, filters and sorting done by the server, with the total. */
export async function getToolPage(filters: ToolFilters, limit: number, cursor: string | undefined): Promise<ToolList> {
  return api<ToolList>(`/v1/tools${query({ ...filters, limit, cursor })}`);
}

export const toolPageQueryOptions = (filters: ToolFilters, limit: number, cursor: string | undefined) =>
  queryOptions({
    queryKey: ['tools', 'page', filters, limit, cursor ?? null],
    queryFn: () => getToolPage(filters, limit, cursor),
    // The table keeps showing the last page while the next answer is on its way.
    placeholderData: keepPreviousData,
  });

/** Every tool that matches the filters, a server page of 1,000 at a time (for "select all that match"). */
export async function getAllMatching(filters: ToolFilters): Promise<Tool[]> {
  const out: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await getToolPage(filters, 1000, cursor);
    out.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return out;
}

export function useToolPage(filters: ToolFilters, limit: number, cursor: string | undefined) {
  return useQuery(toolPageQueryOptions(filters, limit, cursor));
}
