import { queryOptions, useQuery } from '@tanstack/react-query';
import type { AuditCheckpoint } from '../../../../../policy-schemas/types.gen.ts';
import { ApiError, api } from '../../../lib/api-client.ts';

export type { AuditCheckpoint };

/** The newest signed checkpoint of the audit chain, or null while none has been signed. */
export async function getLatestCheckpoint(): Promise<AuditCheckpoint | null> {
  try {
    return await api<AuditCheckpoint>('/v1/audit/checkpoints/latest');
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export const latestCheckpointQueryOptions = () => queryOptions({ queryKey: ['audit', 'checkpoint'], queryFn: getLatestCheckpoint });

export function useLatestCheckpoint() {
  return useQuery(latestCheckpointQueryOptions());
}

/** The checkpoint as a file an auditor keeps outside Toolgate (the form `toolgate audit verify --checkpoint` reads). */
export function saveCheckpoint(cp: AuditCheckpoint): void {
  const url = URL.createObjectURL(new Blob([`${JSON.stringify(cp, null, 2)}\n`], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `toolgate-audit-checkpoint-${cp.seq}.json`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
