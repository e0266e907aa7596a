import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, api } from '../../../lib/api-client.ts';
import type { KeyOverview } from './get-keys.ts';

/** A key change, based on the key-set version the page showed (sent as If-Match). */
export type KeyChange = { keySetVersion: number } & (
  | { kind: 'rotate'; reason: string; promoteAfterSeconds?: number }
  | { kind: 'promote'; kid: string; reason: string }
  | { kind: 'retire'; kid: string; reason: string; reissue?: boolean }
);

/** One audited key change; the reason travels in the body. A 412 means the key set moved on meanwhile. */
export async function changeKeys(change: KeyChange): Promise<{ kid: string; keySetVersion: number }> {
  if (change.kind === 'rotate') {
    return api('/v1/keys/rotate', {
      method: 'POST',
      ifMatch: change.keySetVersion,
      body: { reason: change.reason, ...(change.promoteAfterSeconds !== undefined ? { promoteAfterSeconds: change.promoteAfterSeconds } : {}) },
    });
  }
  const body = change.kind === 'retire' ? { reason: change.reason, reissue: change.reissue ?? false } : { reason: change.reason };
  return api(`/v1/keys/${encodeURIComponent(change.kid)}/${change.kind}`, { method: 'POST', ifMatch: change.keySetVersion, body });
}

/** Whether a key change failed because someone else changed the keys since the page showed them. */
export function keysChangedMeanwhile(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status === 412;
}

export function useChangeKeys() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: changeKeys,
    onError: (err) => {
      // The 412 carries the keys as they are now: show them at once, before the refetch below.
      if (keysChangedMeanwhile(err) && err.current && 'keySet' in err.current) qc.setQueryData(['keys'], err.current as unknown as KeyOverview);
    },
    onSettled: () => Promise.all([qc.invalidateQueries({ queryKey: ['keys'] }), qc.invalidateQueries({ queryKey: ['audit'] })]),
  });
}
