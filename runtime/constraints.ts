// The console also runs this in the browser: no node: modules here.
import type { ValidateFunction } from 'ajv';
import type { ConstraintRef, EvaluationResult } from '../policy-schemas/types.gen.ts';
import type { LoadedBundle, LoadedTool, SubjectInfo } from './load-bundle.ts';

// Argument constraints (DESIGN "Argument constraints", docs/spec.md R7.11): each role may hold
// constraints naming tool globs, a JSON Schema over a call's arguments and what happens
// `otherwise`. loadBundle matches their globs against the catalog and makes their validators
// (compiled when a call first needs one, so an evaluate-only caller never compiles a schema);
// here they are gathered per subject and tool, and checked.

type LoadedConstraint = {
  readonly ref: ConstraintRef;
  /** Per tool position: 1 when one of the constraint's globs names the tool. */
  readonly tools: Uint8Array;
  /** Null for a constraint without a schema object, which can never be met. */
  readonly validate: ValidateFunction | null;
};

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

const byBundle = new WeakMap<LoadedBundle, ReadonlyMap<string, readonly LoadedConstraint[]>>();
const bySubject = new WeakMap<SubjectInfo, SubjectConstraints>();
const NONE: SubjectConstraints = { byPos: new Map(), refs: new Map(), entries: new Map() };

function roleConstraints(loaded: LoadedBundle): ReadonlyMap<string, readonly LoadedConstraint[]> {
  let roles = byBundle.get(loaded);
  if (roles) return roles;
  const out = new Map<string, LoadedConstraint[]>();
  for (const [role, def] of loaded.roles) {
    if (def.constraints.length === 0) continue;
    out.set(
      role,
      def.constraints.map((c) => {
        const ref: ConstraintRef = Object.freeze({
          role,
          index: c.index,
          // Anything but an explicit require_approval denies: a malformed constraint fails closed.
          otherwise: c.otherwise === 'require_approval' ? 'require_approval' : 'deny',
          reason: typeof c.reason === 'string' ? c.reason : '',
        });
        const schemaObject = c.arguments !== null && typeof c.arguments === 'object' && !Array.isArray(c.arguments);
        return { ref, tools: c.tools, validate: schemaObject ? c.validate : null };
      }),
    );
  }
  roles = out;
  byBundle.set(loaded, roles);
  return roles;
}

function subjectConstraints(loaded: LoadedBundle, subject: SubjectInfo): SubjectConstraints {
  let sc = bySubject.get(subject);
  if (sc) return sc;
  const roles = roleConstraints(loaded);
  if (roles.size === 0) sc = NONE;
  else {
    const byPos = new Map<number, LoadedConstraint[]>();
    for (const role of subject.roles) {
      for (const c of roles.get(role) ?? []) {
        for (let i = 0; i < c.tools.length; i++) {
          if (c.tools[i] === 0) continue;
          let list = byPos.get(i);
          if (!list) byPos.set(i, (list = []));
          list.push(c);
        }
      }
    }
    sc = byPos.size === 0 ? NONE : { byPos, refs: new Map(), entries: new Map() };
  }
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
  if (c.validate === null) return false;
  try {
    return c.validate(args) === true;
  } catch {
    // Nested deeper than the validator can follow a recursive schema: not shown to meet it.
    return false;
  }
}
