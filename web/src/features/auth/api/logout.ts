import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, setCsrfToken } from '../../../lib/api-client.ts';

/** Ends the session and forgets the cookie. */
export async function logout(): Promise<void> {
  await api<void>('/v1/session', { method: 'DELETE' });
  setCsrfToken(null);
}

export function useLogout() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: logout,
    onSettled: () => {
      qc.removeQueries({ predicate: (q) => q.queryKey[0] !== 'session' });
      qc.setQueryData(['session'], null);
    },
  });
}
