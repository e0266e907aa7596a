import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Session } from '../../../../../policy-schemas/types.gen.ts';
import { api, ApiError, setCsrfToken } from '../../../lib/api-client.ts';

export type { Session };

/** The logged-in session, or null when there is none (401). */
export async function getSession(): Promise<Session | null> {
  try {
    const s = await api<Session>('/v1/session');
    setCsrfToken(s.csrfToken);
    return s;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      setCsrfToken(null);
      return null;
    }
    throw err;
  }
}

export const sessionQueryOptions = () => queryOptions({ queryKey: ['session'], queryFn: getSession, staleTime: Infinity, retry: false });

export function useSession() {
  return useQuery(sessionQueryOptions());
}
