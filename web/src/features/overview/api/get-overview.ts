import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Overview } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** Every tenant with its published version, draft changes and fleet, and what needs attention. */
export async function getOverview(): Promise<Overview> {
  return api<Overview>('/v1/overview');
}

// Under the tenants key: saving a policy, publishing or approving invalidates it too.
export const overviewQueryOptions = () => queryOptions({ queryKey: ['tenants', 'overview'], queryFn: getOverview, refetchInterval: 30_000 });

export function useOverview() {
  return useQuery(overviewQueryOptions());
}
