import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { PromoteResult } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export type { PromoteResult };

/** What promoting `from` into `to` would change (`plan`), or does change. */
export async function promote(from: string, to: string, opts: { plan: boolean; reason?: string }): Promise<PromoteResult> {
  return api<PromoteResult>(`/v1/tenants/${encodeURIComponent(from)}/promote${opts.plan ? '?plan=1' : ''}`, {
    method: 'POST',
    body: { to, ...(opts.reason ? { reason: opts.reason } : {}) },
  });
}

/** The plan, asked again whenever either draft's policy changes. */
export function usePromotePlan(from: string, to: string | null, key: unknown) {
  return useQuery({
    queryKey: ['tenants', from, 'promote-plan', to, key],
    queryFn: () => promote(from, to!, { plan: true }),
    enabled: !!to,
    retry: false,
  });
}

export function usePromote() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ from, to, reason }: { from: string; to: string; reason: string }) => promote(from, to, { plan: false, reason }),
    onSuccess: (_r, { from, to }) =>
      Promise.all([
        qc.invalidateQueries({ queryKey: ['tenants', to] }),
        qc.invalidateQueries({ queryKey: ['tenants', from, 'promote-plan'] }),
        qc.invalidateQueries({ queryKey: ['tenants', 'overview'] }),
      ]),
  });
}
