import { queryOptions, useQuery } from '@tanstack/react-query';
import type { ToolUsage } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type { ToolUsage };

/** Per readable tenant: what each role does with the tool, who reaches it, its recent decisions. */
export async function getToolUsage(id: string): Promise<ToolUsage> {
  return api<ToolUsage>(`/v1/tools/${encodeURIComponent(id)}/usage`);
}

export const toolUsageQueryOptions = (id: string) => queryOptions({ queryKey: ['tools', 'usage', id], queryFn: () => getToolUsage(id), retry: false });

export function useToolUsage(id: string) {
  return useQuery(toolUsageQueryOptions(id));
}
