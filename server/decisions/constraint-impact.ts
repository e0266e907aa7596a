import type { Bundle, ImpactConstraintChange } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { constraintsNaming } from '../../runtime/constraints.ts';
import { subjectInfo } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import type { DbOrTx } from '../db/database.ts';
import { bundleRow } from '../store/bundles.ts';

/** One constraint as impact compares it: its role and what it asks, whatever its position or wording. */
type Held = { key: string; role: string; index: number; otherwise: 'deny' | 'require_approval'; reason: string };

/**
 * The argument-constraint side of impact analysis. Decision logs never hold arguments, so a
 * constraint's outcome on a logged call cannot be replayed; what can be said is which constraints
 * the draft adds or removes for the calls logged, against the bundle version that decided each
 * one (DESIGN "Impact analysis"). Also tells impact.ts when a logged decision may have come from a
 * constraint, where comparing the draft's name-level decision with it would report a false change.
 */
export class ConstraintImpact {
  private readonly bundles = new Map<number, LoadedBundle | null>();
  private readonly changes = new Map<string, ImpactConstraintChange>();

  constructor(
    private readonly db: DbOrTx,
    private readonly tenant: string,
    private readonly draft: LoadedBundle,
  ) {}

  /**
   * Notes `calls` logged calls of `tool` by `subject` decided by bundle `version`. Answers whether
   * the logged decision depends on the policy's name-level rules alone: false for a
   * require_approval that a constraint of the logged bundle may have asked for.
   */
  async note(subject: string, tool: string, version: number | null, decision: string, calls: number): Promise<boolean> {
    const logged = version === null ? null : await this.bundle(version);
    const before = logged ? held(logged, subject, tool) : [];
    const after = held(this.draft, subject, tool);
    if (logged) {
      const was = new Set(before.map((c) => c.key));
      const is = new Set(after.map((c) => c.key));
      for (const c of after) if (!was.has(c.key)) this.count(tool, 'added', c, calls);
      for (const c of before) if (!is.has(c.key)) this.count(tool, 'removed', c, calls);
    }
    return !(decision === 'require_approval' && before.some((c) => c.otherwise === 'require_approval'));
  }

  report(): ImpactConstraintChange[] {
    return [...this.changes.values()].sort(
      (a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool) || a.change.localeCompare(b.change) || a.role.localeCompare(b.role) || a.index - b.index,
    );
  }

  private count(tool: string, change: 'added' | 'removed', c: Held, calls: number): void {
    const key = `${tool}\u0000${change}\u0000${c.key}`;
    let e = this.changes.get(key);
    if (!e) this.changes.set(key, (e = { tool, change, role: c.role, index: c.index, otherwise: c.otherwise, reason: c.reason, calls: 0 }));
    e.calls += calls;
  }

  private async bundle(version: number): Promise<LoadedBundle | null> {
    let loaded = this.bundles.get(version);
    if (loaded === undefined) {
      const row = await bundleRow(this.db, this.tenant, version);
      try {
        loaded = row ? loadBundle(JSON.parse(row.content) as Bundle, { inputValidators: false }) : null;
      } catch {
        // A version this server cannot read any more says nothing about constraints.
        loaded = null;
      }
      this.bundles.set(version, loaded);
    }
    return loaded;
  }
}

/** The constraints of the subject's roles that name the tool in a bundle, each keyed by role and content. */
function held(loaded: LoadedBundle, subject: string, tool: string): Held[] {
  const t = loaded.byId.get(tool);
  if (!t) return [];
  const refs = constraintsNaming(loaded, subjectInfo(loaded, subject), t.pos) ?? [];
  const roles = (loaded.bundle as Bundle).policy.roles ?? {};
  return refs.map((ref) => {
    const source = roles[ref.role]?.constraints?.[ref.index];
    return { ...ref, key: canonicalJson({ role: ref.role, otherwise: ref.otherwise, arguments: source?.arguments ?? null }) };
  });
}
