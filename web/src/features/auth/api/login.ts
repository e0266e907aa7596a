import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, setCsrfToken } from '../../../lib/api-client.ts';
import type { Session } from './get-session.ts';

/** Exchanges an API token for a session cookie. */
export async function login(token: string): Promise<Session> {
  const s = await api<Session>('/v1/session', { method: 'POST', body: { token } });
  setCsrfToken(s.csrfToken);
  return s;
}

export function useLogin() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: login,
    onSuccess: (session) => {
      // Drop what another identity may have loaded; keep the session query its observers watch.
      qc.removeQueries({ predicate: (q) => q.queryKey[0] !== 'session' });
      qc.setQueryData(['session'], session);
    },
  });
}
