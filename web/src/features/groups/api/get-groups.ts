import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Group } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export async function getGroups(): Promise<Group[]> {
  return (await api<{ items: Group[] }>('/v1/groups')).items;
}

export const groupsQueryOptions = () => queryOptions({ queryKey: ['groups'], queryFn: getGroups });

export function useGroups() {
  return useQuery(groupsQueryOptions());
}
