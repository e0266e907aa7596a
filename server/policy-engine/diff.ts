import type { Bundle, BundleDiff, BundleTool, DecisionChange, PolicyDecision, RoleDiff } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import { createTenantEnforcer } from './enforcer.ts';
import type { TenantEnforcer } from './enforcer.ts';

export type DiffSide = { version: number | 'draft'; bundle: Bundle };

/**
 * What changed between two bundles of a tenant: catalog entries, the tools each role can reach,
 * and every (bound subject, tool) decision that changed. Allow/deny comes from each side's Casbin
 * enforcer; groups and approvals from its policy.
 */
export async function diffBundles(from: DiffSide, to: DiffSide): Promise<BundleDiff> {
  const a = loadBundle(from.bundle);
  const b = loadBundle(to.bundle);
  const [ea, eb] = await Promise.all([
    createTenantEnforcer(from.bundle.tenant, from.bundle.revision, from.bundle.casbin),
    createTenantEnforcer(to.bundle.tenant, to.bundle.revision, to.bundle.casbin),
  ]);

  const entries = (l: LoadedBundle) => new Map(l.bundle.catalog.tools.map((t) => [t.id, canonicalJson(t)]));
  const ca = entries(a);
  const cb = entries(b);
  const added = [...cb.keys()].filter((id) => !ca.has(id));
  const removed = [...ca.keys()].filter((id) => !cb.has(id));
  const changed = [...cb.keys()].filter((id) => ca.has(id) && ca.get(id) !== cb.get(id));

  const roles: RoleDiff[] = [];
  for (const role of union(a.roles.keys(), b.roles.keys())) {
    const ra = a.roles.has(role) ? reachable(a, role) : null;
    const rb = b.roles.has(role) ? reachable(b, role) : null;
    const plus = [...(rb ?? [])].filter((id) => !ra?.has(id));
    const minus = [...(ra ?? [])].filter((id) => !rb?.has(id));
    const status = ra === null ? 'added' : rb === null ? 'removed' : 'changed';
    if (status !== 'changed' || plus.length > 0 || minus.length > 0) roles.push({ role, status, added: plus, removed: minus });
  }

  const decisions: DecisionChange[] = [];
  const tools = union(ca.keys(), cb.keys());
  for (const subject of union(a.bindings.keys(), b.bindings.keys())) {
    for (const tool of tools) {
      const da = decision(a, ea, subject, tool);
      const db = decision(b, eb, subject, tool);
      if (da !== db) decisions.push({ subject, tool, from: da, to: db });
    }
  }

  return {
    from: { version: from.version, revision: from.bundle.revision },
    to: { version: to.version, revision: to.bundle.revision },
    identical: from.bundle.revision === to.bundle.revision,
    catalog: { added, removed, changed },
    roles,
    decisions,
  };
}

/** Tools a role can reach: not excluded, allowed and not denied by the role, in a group it permits. */
function reachable(l: LoadedBundle, roleName: string): Set<string> {
  const role = l.roles.get(roleName)!;
  const out = new Set<string>();
  for (const t of l.tools) {
    if (!t.def || role.deny[t.pos] === 1 || role.allow[t.pos] !== 1) continue;
    if (role.permitsAnyGroup || t.groups.some((g) => role.groups.has(g))) out.add(t.id);
  }
  return out;
}

function decision(l: LoadedBundle, enforcer: TenantEnforcer, subject: string, toolId: string): PolicyDecision {
  const tool = l.byId.get(toolId);
  const roles = (l.bindings.get(subject) ?? []).flatMap((r) => l.roles.get(r) ?? []);
  if (!tool?.def || roles.length === 0 || !enforcer.allows(subject, toolId)) return 'deny';
  if (!roles.some((r) => r.permitsAnyGroup || tool.groups.some((g) => r.groups.has(g)))) return 'deny';
  const effect = (tool.def as BundleTool).effect;
  return roles.some((r) => r.requireApproval.has(effect)) ? 'require_approval' : 'allow';
}

function union(a: Iterable<string>, b: Iterable<string>): string[] {
  return [...new Set([...a, ...b])].sort();
}

/** Counts for the version list, with the changes against the previous bundle. */
export async function summarize(bundle: Bundle, previous: Bundle | null) {
  const tools = bundle.catalog.tools.length;
  const excluded = bundle.catalog.tools.filter((t) => 'excluded' in t).length;
  let changes = { toolsAdded: 0, toolsRemoved: 0, decisionsChanged: 0 };
  if (previous) {
    const d = await diffBundles({ version: 0, bundle: previous }, { version: 0, bundle });
    changes = { toolsAdded: d.catalog.added.length, toolsRemoved: d.catalog.removed.length, decisionsChanged: d.decisions.length };
  }
  return {
    tools,
    callable: tools - excluded,
    excluded,
    roles: Object.keys(bundle.policy.roles).length,
    subjects: Object.keys(bundle.policy.bindings).length,
    grants: bundle.policy.grants.length,
    changes,
  };
}
