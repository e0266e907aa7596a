import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Token } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** API tokens as listed (never their secrets); used to show who an audit actor `token:<id>` is. */
export async function getTokens(): Promise<Token[]> {
  return (await api<{ items: Token[] }>('/v1/tokens')).items;
}

export const tokensQueryOptions = () => queryOptions({ queryKey: ['tokens'], queryFn: getTokens, staleTime: 60_000, retry: false });

export function useTokens(enabled = true) {
  return useQuery({ ...tokensQueryOptions(), enabled });
}
