import { newEnforcer, newModelFromString } from 'casbin';
import type { Enforcer } from 'casbin';
import type { BundleCasbin } from '../../policy-schemas/types.gen.ts';
import { CALL_ACTION } from './casbin-policy.ts';

/** A Casbin enforcer holding one tenant's bundle policy. */
export type TenantEnforcer = {
  readonly tenant: string;
  readonly revision: string;
  /** True when the subject may call the tool: neither denied nor not allowed. */
  allows(subject: string, toolId: string): boolean;
};

/** Builds an enforcer from a bundle's `casbin` section, exactly as another language's Casbin would. */
export async function createTenantEnforcer(tenant: string, revision: string, casbin: BundleCasbin): Promise<TenantEnforcer> {
  const e: Enforcer = await newEnforcer(newModelFromString(casbin.model));
  const p = casbin.policy.filter((r) => r[0] === 'p').map((r) => r.slice(1));
  const g = casbin.policy.filter((r) => r[0] === 'g').map((r) => r.slice(1));
  if (p.length > 0) await e.addPolicies(p);
  if (g.length > 0) await e.addGroupingPolicies(g);
  return {
    tenant,
    revision,
    allows: (subject, toolId) => e.enforceSync(subject, tenant, toolId, CALL_ACTION),
  };
}

/**
 * One enforcer per tenant (never every tenant in one: Casbin scans every policy line per call),
 * rebuilt when the tenant's revision changes.
 */
export class TenantEnforcers {
  private readonly byTenant = new Map<string, Promise<TenantEnforcer>>();

  async get(tenant: string, revision: string, casbin: BundleCasbin): Promise<TenantEnforcer> {
    const current = this.byTenant.get(tenant);
    if (current) {
      const e = await current.catch(() => undefined);
      if (e && e.revision === revision) return e;
    }
    const next = createTenantEnforcer(tenant, revision, casbin);
    this.byTenant.set(tenant, next);
    next.catch(() => this.byTenant.delete(tenant));
    return next;
  }

  forget(tenant: string): void {
    this.byTenant.delete(tenant);
  }
}

/** The process-wide enforcers. */
export const tenantEnforcers = new TenantEnforcers();
