import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api-client.ts';

export type KeyChange =
  | { kind: 'rotate'; reason: string; promoteAfterSeconds?: number }
  | { kind: 'promote'; kid: string; reason: string }
  | { kind: 'retire'; kid: string; reason: string; reissue?: boolean };

/** One audited key change; the reason travels in the body. */
export async function changeKeys(change: KeyChange): Promise<{ kid: string; keySetVersion: number }> {
  if (change.kind === 'rotate') {
    return api('/v1/keys/rotate', {
      method: 'POST',
      body: { reason: change.reason, ...(change.promoteAfterSeconds !== undefined ? { promoteAfterSeconds: change.promoteAfterSeconds } : {}) },
    });
  }
  const body = change.kind === 'retire' ? { reason: change.reason, reissue: change.reissue ?? false } : { reason: change.reason };
  return api(`/v1/keys/${encodeURIComponent(change.kid)}/${change.kind}`, { method: 'POST', body });
}

export function useChangeKeys() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: changeKeys,
    onSettled: () => Promise.all([qc.invalidateQueries({ queryKey: ['keys'] }), qc.invalidateQueries({ queryKey: ['audit'] })]),
  });
}
