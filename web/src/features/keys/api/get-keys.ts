import { queryOptions, useQuery } from '@tanstack/react-query';
import type { KeyOverview } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type { KeyOverview };

/** The signing keys with their status, the key set and where its root key is. */
export async function getKeys(): Promise<KeyOverview> {
  return api<KeyOverview>('/v1/keys');
}

export const keysQueryOptions = () => queryOptions({ queryKey: ['keys'], queryFn: getKeys });

export function useKeys() {
  return useQuery(keysQueryOptions());
}
