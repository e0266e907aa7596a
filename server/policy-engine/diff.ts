import type { Bundle, BundleDiff, BundleV1, DecisionChange, PolicyDecision, RoleDiff } from '../../policy-schemas/types.gen.ts';
import { subjectInfo } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { LoadedBundle, LoadedTool, SubjectInfo } from '../../runtime/load-bundle.ts';
import { tenantEnforcers } from './enforcer.ts';
import type { TenantEnforcer } from './enforcer.ts';

export type DiffSide = { version: number | 'draft'; bundle: Bundle | BundleV1 };

/** How many changed (subject, tool) decisions each side's Casbin enforcer re-decides. */
const CASBIN_CONFIRM_LIMIT = 2000;

/**
 * What changed between two bundles of a tenant: catalog entries, the tools each role can reach,
 * and every (bound subject, tool) decision that changed. Decisions come from each side's
 * precompiled index (the SDK's, proven equal to Casbin by the differential test); with `casbin`,
 * each changed decision (up to a limit) is decided again by that side's Casbin enforcer, whose
 * answer is the one reported.
 */
export async function diffBundles(from: DiffSide, to: DiffSide, opts: { casbin?: boolean } = {}): Promise<BundleDiff> {
  // Decisions need no argument checks: leaving the input schemas uncompiled spares a publish
  // compiling the previous version's (cold after a start).
  const a = loadBundle(from.bundle, { inputValidators: false });
  const b = loadBundle(to.bundle, { inputValidators: false });

  // Tools as the runtime reads them (defaults filled in, schemas inline), so a v1 and a v2 bundle of the same data agree.
  const entries = (l: LoadedBundle) =>
    new Map<string, unknown>(l.tools.map((t) => [t.id, t.def ?? { id: t.id, excluded: t.excluded, definitionHash: t.definitionHash }]));
  const ca = entries(a);
  const cb = entries(b);
  const added = [...cb.keys()].filter((id) => !ca.has(id));
  const removed = [...ca.keys()].filter((id) => !cb.has(id));
  const changed = [...cb.keys()].filter((id) => ca.has(id) && !sameJson(ca.get(id), cb.get(id)));

  const roles: RoleDiff[] = [];
  for (const role of union(a.roles.keys(), b.roles.keys())) {
    const ra = a.roles.has(role) ? reachable(a, role) : null;
    const rb = b.roles.has(role) ? reachable(b, role) : null;
    const plus = [...(rb ?? [])].filter((id) => !ra?.has(id));
    const minus = [...(ra ?? [])].filter((id) => !rb?.has(id));
    const status = ra === null ? 'added' : rb === null ? 'removed' : 'changed';
    if (status !== 'changed' || plus.length > 0 || minus.length > 0) roles.push({ role, status, added: plus, removed: minus });
  }

  let decisions: DecisionChange[] = [];
  changedDecisions(a, b, union(ca.keys(), cb.keys()), (subject, tool, from, to) => decisions.push({ subject, tool, from, to }));
  if (opts.casbin && decisions.length > 0) {
    const [ea, eb] = await Promise.all([
      tenantEnforcers.get(from.bundle.tenant, from.bundle.revision, from.bundle.casbin),
      tenantEnforcers.get(to.bundle.tenant, to.bundle.revision, to.bundle.casbin),
    ]);
    decisions = decisions.flatMap((d, i) => {
      if (i >= CASBIN_CONFIRM_LIMIT) return [d];
      const fromCasbin = decision(a, d.subject, d.tool, ea);
      const toCasbin = decision(b, d.subject, d.tool, eb);
      return fromCasbin === toCasbin ? [] : [{ ...d, from: fromCasbin, to: toCasbin }];
    });
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

/**
 * A subject's decision on a tool before request facts: deny unless the tool can be visible, some
 * role permits one of its groups and the policy allows it (index, or `enforcer` when given).
 */
function decision(l: LoadedBundle, subject: string, toolId: string, enforcer?: TenantEnforcer): PolicyDecision {
  const tool = l.byId.get(toolId);
  if (tool === undefined || tool.excluded !== null) return 'deny';
  const info = subjectInfo(l, subject);
  if (info.roles.length === 0) return 'deny';
  const allowed = enforcer ? enforcer.allows(subject, toolId) : info.policy[tool.pos] === 0;
  return allowed ? decisionAllowed(tool, info) : 'deny';
}

/** The decision on a tool that can be visible, for a subject with roles whose policy allows it: its groups and effect decide. */
function decisionAllowed(tool: LoadedTool, info: SubjectInfo): PolicyDecision {
  if (!info.permitsAnyGroup && !tool.groups.some((g) => info.permittedGroups.has(g))) return 'deny';
  // A tool that is not excluded has an effect (its `def` would say the same, made only when read).
  return info.requireApproval.has(tool.effect!) ? 'require_approval' : 'allow';
}

/** decision() from the precompiled index, with the subject's info and the tool already looked up. */
function indexDecision(tool: LoadedTool | undefined, info: SubjectInfo): PolicyDecision {
  if (tool === undefined || tool.excluded !== null || info.roles.length === 0 || info.policy[tool.pos] !== 0) return 'deny';
  return decisionAllowed(tool, info);
}

/**
 * Whether two JSON values have the same canonical form, compared in place: a publish compares
 * every catalog entry with the previous version's, and writing both out was most of its diff.
 */
export function sameJson(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return false;
  if (Array.isArray(x) || Array.isArray(y)) {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameJson(x[i] ?? null, y[i] ?? null)) return false;
    return true;
  }
  const a = x as Record<string, unknown>;
  const b = y as Record<string, unknown>;
  // Members holding undefined have no JSON form: they are absent, as canonical JSON leaves them out.
  const names = (o: Record<string, unknown>) => Object.keys(o).filter((k) => o[k] !== undefined);
  const na = names(a);
  if (na.length !== names(b).length) return false;
  for (const k of na) if (!Object.hasOwn(b, k) || !sameJson(a[k], b[k])) return false;
  return true;
}

function union(a: Iterable<string>, b: Iterable<string>): string[] {
  return [...new Set([...a, ...b])].sort();
}

/**
 * Every (bound subject, tool) pair whose decision from the index differs between two loaded
 * bundles, subjects and tools in sorted order: each subject's info looked up once, not per tool.
 */
function changedDecisions(
  a: LoadedBundle,
  b: LoadedBundle,
  tools: readonly string[],
  found: (subject: string, tool: string, from: PolicyDecision, to: PolicyDecision) => void,
): void {
  const ta = tools.map((id) => a.byId.get(id));
  const tb = tools.map((id) => b.byId.get(id));
  for (const subject of union(a.bindings.keys(), b.bindings.keys())) {
    const ia = subjectInfo(a, subject);
    const ib = subjectInfo(b, subject);
    for (let i = 0; i < tools.length; i++) {
      const da = indexDecision(ta[i], ia);
      const db = indexDecision(tb[i], ib);
      if (da !== db) found(subject, tools[i], da, db);
    }
  }
}

/**
 * Counts for the version list, with the changes against the previous bundle. Either side may be
 * given loaded already (a caller that holds it, as the tests gate's, loads nothing again).
 */
export async function summarize(bundle: Bundle | LoadedBundle, previous: Bundle | LoadedBundle | null) {
  const doc = isLoaded(bundle) ? (bundle.bundle as Bundle) : bundle;
  const tools = doc.catalog.tools.length;
  const excluded = doc.catalog.tools.filter((t) => 'excluded' in t).length;
  let changes = { toolsAdded: 0, toolsRemoved: 0, decisionsChanged: 0 };
  if (previous) {
    // The counts diffBundles would give, without what only a full diff shows (which catalog
    // entries changed, each role's reach): a publish compared every entry only to count others.
    const a = isLoaded(previous) ? previous : loadBundle(previous, { inputValidators: false });
    const b = isLoaded(bundle) ? bundle : loadBundle(bundle, { inputValidators: false });
    const toolsAdded = b.tools.filter((t) => !a.byId.has(t.id)).length;
    const toolsRemoved = a.tools.filter((t) => !b.byId.has(t.id)).length;
    let decisionsChanged = 0;
    changedDecisions(a, b, union(a.byId.keys(), b.byId.keys()), () => decisionsChanged++);
    changes = { toolsAdded, toolsRemoved, decisionsChanged };
  }
  return {
    tools,
    callable: tools - excluded,
    excluded,
    roles: Object.keys(doc.policy.roles ?? {}).length,
    subjects: Object.keys(doc.policy.bindings ?? {}).length,
    grants: (doc.policy.grants ?? []).length,
    changes,
  };
}

function isLoaded(b: Bundle | LoadedBundle): b is LoadedBundle {
  return 'byId' in b && b.byId instanceof Map;
}
