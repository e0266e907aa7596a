import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Token, TokenCreate } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

/** Creates a token; the answer carries the secret, shown once. */
export async function createToken(body: TokenCreate): Promise<Token> {
  return api<Token>('/v1/tokens', { method: 'POST', body });
}

/** Revokes a token; If-Match is the version the list showed, so a changed token is not revoked blind. */
export async function revokeToken({ id, version }: { id: string; version?: number }): Promise<void> {
  await api<void>(`/v1/tokens/${encodeURIComponent(id)}`, { method: 'DELETE', ifMatch: version });
}

export function useCreateToken() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: createToken, onSuccess: () => qc.invalidateQueries({ queryKey: ['tokens'] }) });
}

export function useRevokeToken() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: revokeToken, onSuccess: () => qc.invalidateQueries({ queryKey: ['tokens'] }) });
}
