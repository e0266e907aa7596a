import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export async function getTool(id: string): Promise<Tool> {
  return api<Tool>(`/v1/tools/${encodeURIComponent(id)}`);
}

export const toolQueryOptions = (id: string) => queryOptions({ queryKey: ['tools', 'detail', id], queryFn: () => getTool(id) });

export function useTool(id: string) {
  return useQuery({ ...toolQueryOptions(id), enabled: id !== '' });
}
