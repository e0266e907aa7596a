// The v1 form of a v2 bundle, for the loader's v1 tests and the format benchmark only (runtimes
// read v1 for one release; nothing writes it any more): defaults written out, every input schema
// inline, and the index a v1 compiler wrote, derived from catalog and policy as runtimes derive it.
import type { Bundle, BundleTool, BundleV1, BundleV1Tool, ExcludedTool } from '../../policy-schemas/types.gen.ts';
import { readBundleContent } from '../../runtime/bundle-content.ts';
import { BUNDLE_FORMAT_V1, bundleMembers, bundleRevision } from '../../runtime/bundle-format.ts';
import { sha256Hex } from '../../runtime/sha256.ts';

export function toV1(bundle: Bundle): BundleV1 {
  const content = readBundleContent(bundle);
  const ids = content.tools.map((t) => t.id);
  const idsAt = (positions: readonly number[]) => positions.map((p) => ids[p]);
  const tools = content.tools.map((t): BundleV1Tool | ExcludedTool => {
    if (t.def === null) return { id: t.id, excluded: t.excluded, definitionHash: t.definitionHash };
    const { groups, ...def } = t.def as BundleTool & { groups: string[] };
    return { ...def, groups: [...groups] } as BundleV1Tool;
  });
  const policy = bundle.policy;
  const v1: BundleV1 = {
    format: BUNDLE_FORMAT_V1,
    tenant: bundle.tenant,
    version: bundle.version,
    revision: '',
    previousRevision: bundle.previousRevision,
    issuedAt: bundle.issuedAt,
    expiresAt: bundle.expiresAt,
    catalog: {
      tools,
      groups: bundle.catalog.groups.map((g) => ({ name: g.name, description: g.description ?? '', includes: g.includes ?? [] })),
      states: bundle.catalog.states.map((s) => ({ name: s.name, description: s.description ?? '' })),
    },
    policy: {
      roles: Object.fromEntries(
        [...content.roles].map(([name, r]) => [
          name,
          { groups: [...r.groups], allow: [...r.allow], deny: [...r.deny], requireApproval: [...r.requireApproval] },
        ]),
      ),
      bindings: policy.bindings ?? {},
      profiles: Object.fromEntries([...content.profiles].map(([name, p]) => [name, { enable: [...p.enable], disable: [...p.disable] }])),
      ...(policy.budgets ? { budgets: policy.budgets } : {}),
      bundleTtlSeconds: policy.bundleTtlSeconds,
      grants: policy.grants ?? [],
    },
    casbin: bundle.casbin,
    conformance: bundle.conformance,
    index: {
      tools: ids,
      groups: Object.fromEntries([...content.groupClosure].map(([name, c]) => [name, [...c]])),
      roles: Object.fromEntries(
        [...content.roles].map(([name, r]) => [name, { groups: [...r.expandedGroups], allow: idsAt(r.allowPositions), deny: idsAt(r.denyPositions) }]),
      ),
      grants: content.grants.map((g) => ({ connectionId: g.connectionId, tools: idsAt(g.positions) })),
      profileScoped: idsAt(content.profileScoped),
    },
  };
  v1.revision = bundleRevision(bundleMembers(v1), sha256Hex);
  return v1;
}
