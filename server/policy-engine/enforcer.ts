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
 * Enforcers by (tenant, revision), each holding one tenant's rows only (never every tenant in one:
 * Casbin scans every policy line of an enforcer per call). A small LRU, since a revision's rows
 * never change.
 */
export class TenantEnforcers {
  private readonly byRevision = new Map<string, Promise<TenantEnforcer>>();

  constructor(private readonly max = 64) {}

  get(tenant: string, revision: string, casbin: BundleCasbin): Promise<TenantEnforcer> {
    const key = `${tenant}\u0000${revision}`;
    let e = this.byRevision.get(key);
    if (e) {
      this.byRevision.delete(key);
    } else {
      e = createTenantEnforcer(tenant, revision, casbin);
      e.catch(() => this.byRevision.delete(key));
      if (this.byRevision.size >= this.max) this.byRevision.delete(this.byRevision.keys().next().value as string);
    }
    this.byRevision.set(key, e);
    return e;
  }
}

/**
 * The process-wide enforcers. A pure memo, so it may live in the module: the key (tenant, revision)
 * names the content, since a revision is the sha256 of a bundle's canonical content, its casbin
 * section included; two servers asking for the same key ask for the same enforcer, and the LRU
 * bounds it (64).
 */
export const tenantEnforcers = new TenantEnforcers();
