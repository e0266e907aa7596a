import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, setCsrfToken } from '../../../lib/api-client.ts';

/** Ends the session and forgets the cookie; a person signed in through single sign-on goes on to sign out at their identity provider. */
export async function logout(): Promise<void> {
  const answer = await api<{ endSessionUrl?: string } | undefined>('/v1/session', { method: 'DELETE' });
  setCsrfToken(null);
  if (answer?.endSessionUrl) window.location.assign(answer.endSessionUrl);
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
