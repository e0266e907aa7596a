import { queryOptions, useQuery } from '@tanstack/react-query';
import type { FilterReason, PolicyDecision, TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { getPolicy } from '../../tenants/api/get-policy.ts';
import { getTenants } from '../../tenants/api/get-tenants.ts';
import { simulate } from '../../tenants/api/simulate.ts';

export type Reach = {
  tenant: string;
  role: string;
  /** The subject simulated for the role; absent when no subject is bound to it. */
  subject?: string;
  visible: boolean;
  decision?: PolicyDecision;
  reason?: FilterReason | 'group_not_permitted' | 'no_subject';
  /** The tenant's draft policy, to explain a hidden tool. */
  policy: TenantPolicy;
};

/**
 * Who can see a tool now, role by role, from the simulator on each tenant's draft: every role is
 * simulated through a subject bound to it, asking for the role's own groups.
 */
export async function getToolReach(toolId: string): Promise<Reach[]> {
  const out: Reach[] = [];
  for (const tenant of await getTenants()) {
    const policy = await getPolicy(tenant.id);
    for (const [role, def] of Object.entries(policy.roles ?? {})) {
      const subject = Object.entries(policy.bindings ?? {}).find(([, roles]) => roles.includes(role))?.[0];
      if (!subject) {
        out.push({ policy, tenant: tenant.id, role, visible: false, reason: 'no_subject' });
        continue;
      }
      const r = await simulate(tenant.id, { subject, groups: def.groups?.length ? def.groups : undefined });
      const shown = r.tools.find((t) => t.id === toolId);
      const hidden = r.filtered.find((f) => f.id === toolId);
      if (r.rejected) out.push({ policy, tenant: tenant.id, role, subject, visible: false, reason: 'group_not_permitted' });
      else if (shown) out.push({ policy, tenant: tenant.id, role, subject, visible: true, decision: shown.decision });
      else out.push({ policy, tenant: tenant.id, role, subject, visible: false, reason: hidden?.reason ?? 'group' });
    }
  }
  return out;
}

export const toolReachQueryOptions = (toolId: string, after: number) =>
  queryOptions({ queryKey: ['tools', 'reach', toolId, after], queryFn: () => getToolReach(toolId), staleTime: 0, retry: false });

/** The reach of a tool, asked again whenever `after` (e.g. the tool's version) changes. */
export function useToolReach(toolId: string, after: number, enabled = true) {
  return useQuery({ ...toolReachQueryOptions(toolId, after), enabled });
}
