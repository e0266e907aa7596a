import type { TenantOverview } from '../../policy-schemas/types.gen.ts';
import type { BundleParts } from '../compiler/bundle-parts.ts';

const MAX_CACHED = 1000;

/**
 * What the console's overview (`GET /v1/overview`) keeps between requests, one per server
 * (AppDeps.overview): each tenant's draft state with the key of everything it was computed from,
 * and the part hashes of bundles by revision. While no tool, group, state, policy, grant or publish
 * changed, an overview reads a few rows instead of compiling a draft of thousands of tools.
 */
export class OverviewCache {
  private readonly draftStates = new Map<string, { key: string; state: TenantOverview['draft'] }>();
  // A revision names its content, so its parts never change.
  private readonly partsByRevision = new Map<string, BundleParts>();

  /** The tenant's draft state when it was computed from exactly `key`'s inputs. */
  draftState(tenant: string, key: string): TenantOverview['draft'] | undefined {
    const hit = this.draftStates.get(tenant);
    return hit?.key === key ? hit.state : undefined;
  }

  rememberDraftState(tenant: string, key: string, state: TenantOverview['draft']): void {
    if (this.draftStates.size >= MAX_CACHED) this.draftStates.clear();
    this.draftStates.set(tenant, { key, state });
  }

  /** A bundle's parts by its revision, computed once. */
  async parts(revision: string, compute: () => Promise<BundleParts>): Promise<BundleParts> {
    let hit = this.partsByRevision.get(revision);
    if (!hit) {
      hit = await compute();
      if (this.partsByRevision.size >= MAX_CACHED) this.partsByRevision.clear();
      this.partsByRevision.set(revision, hit);
    }
    return hit;
  }
}
