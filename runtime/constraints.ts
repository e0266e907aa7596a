// The console also runs this in the browser: no node: modules here.
import type { ConstraintRef, EvaluationResult } from '../policy-schemas/types.gen.ts';
import type { LoadedBundle, LoadedConstraint, LoadedTool, SubjectInfo } from './load-bundle.ts';

// Argument constraints (DESIGN "Argument constraints", docs/spec.md R7.11): each role may hold
// constraints naming tool globs, a JSON Schema over a call's arguments and what happens
// `otherwise`. loadBundle matches their globs against the catalog, makes their validators
// (compiled when a call first needs one, so an evaluate-only caller never compiles a schema) and
// their frozen refs; here they are gathered per subject and tool, and checked.

/** Per subject, per tool position: the constraints of the subject's roles that name the tool, in role order then index. */
type SubjectConstraints = {
  readonly byPos: ReadonlyMap<number, readonly LoadedConstraint[]>;
  readonly refs: Map<number, readonly ConstraintRef[]>;
  /** Frozen evaluate entries of constrained tools, made once per tool and decision. */
  readonly entries: Map<number, Partial<Record<Decision, ToolEntry>>>;
};
type ToolEntry = EvaluationResult['tools'][number];
type Decision = ToolEntry['decision'];

/** What the constraints of a call's subject answer when some fails: the outcome and the constraint that decided. */
export type ConstraintVerdict = { readonly outcome: 'deny' | 'require_approval'; readonly constraint: ConstraintRef };

const bySubject = new WeakMap<SubjectInfo, SubjectConstraints>();
const NONE: SubjectConstraints = { byPos: new Map(), refs: new Map(), entries: new Map() };
const NO_CONSTRAINTS: readonly LoadedConstraint[] = Object.freeze([]);

function subjectConstraints(loaded: LoadedBundle, subject: SubjectInfo): SubjectConstraints {
  let sc = bySubject.get(subject);
  if (sc) return sc;
  const byPos = new Map<number, LoadedConstraint[]>();
  for (const role of subject.roles) {
    for (const c of loaded.roles.get(role)?.constraints ?? NO_CONSTRAINTS) {
      for (let i = 0; i < c.tools.length; i++) {
        if (c.tools[i] === 0) continue;
        let list = byPos.get(i);
        if (!list) byPos.set(i, (list = []));
        list.push(c);
      }
    }
  }
  sc = byPos.size === 0 ? NONE : { byPos, refs: new Map(), entries: new Map() };
  bySubject.set(subject, sc);
  return sc;
}

/** The constraints of the subject's roles that name the tool at `pos` (evaluate step 4), or undefined when none does. */
export function constraintsNaming(loaded: LoadedBundle, subject: SubjectInfo, pos: number): readonly ConstraintRef[] | undefined {
  const sc = subjectConstraints(loaded, subject);
  const list = sc.byPos.get(pos);
  if (!list) return undefined;
  let refs = sc.refs.get(pos);
  if (!refs) {
    refs = Object.freeze(list.map((c) => c.ref));
    sc.refs.set(pos, refs);
  }
  return refs;
}

/**
 * For evaluate: null when no constraint of the subject's roles names any tool (the common case,
 * answered with the tools' shared entries), else a function giving a visible tool's entry, with
 * the constraints that name it when some do.
 */
export function constrainedEntries(loaded: LoadedBundle, subject: SubjectInfo): ((tool: LoadedTool, decision: Decision) => ToolEntry) | null {
  const sc = subjectConstraints(loaded, subject);
  if (sc === NONE) return null;
  return (tool, decision) => {
    const refs = constraintsNaming(loaded, subject, tool.pos);
    if (refs === undefined) return tool.entries[decision];
    let entries = sc.entries.get(tool.pos);
    if (!entries) sc.entries.set(tool.pos, (entries = {}));
    return (entries[decision] ??= Object.freeze({ id: tool.id, decision, constraints: refs as ConstraintRef[] }));
  };
}

/**
 * Checks a call's arguments (already valid by the tool's input schema) against every constraint of
 * the subject's roles that names the tool: the first failing `deny` constraint decides, whichever
 * role holds it (deny wins); else the first failing `require_approval` one. Null when all are met.
 * A constraint whose schema does not compile, or cannot be checked on these arguments, fails.
 */
export function checkConstraints(loaded: LoadedBundle, subject: SubjectInfo, tool: LoadedTool, args: unknown): ConstraintVerdict | null {
  const list = subjectConstraints(loaded, subject).byPos.get(tool.pos);
  if (list === undefined) return null;
  let approval: LoadedConstraint | undefined;
  for (const c of list) {
    if (c.ref.otherwise !== 'deny' && approval !== undefined) continue;
    if (meets(c, args)) continue;
    if (c.ref.otherwise === 'deny') return { outcome: 'deny', constraint: c.ref };
    approval = c;
  }
  return approval ? { outcome: 'require_approval', constraint: approval.ref } : null;
}

function meets(c: LoadedConstraint, args: unknown): boolean {
  try {
    return c.validate(args) === true;
  } catch {
    // Nested deeper than the validator can follow a recursive schema: not shown to meet it.
    return false;
  }
}
