import { queryOptions, useQuery } from '@tanstack/react-query';
import type { State } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export async function getStates(): Promise<State[]> {
  return (await api<{ items: State[] }>('/v1/states')).items;
}

export const statesQueryOptions = () => queryOptions({ queryKey: ['states'], queryFn: getStates });

export function useStates() {
  return useQuery(statesQueryOptions());
}
