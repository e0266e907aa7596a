// docs/spec.md R7.11 (argument constraints) read longhand over the bundle JSON, with the plausible
// misreadings of it: misreadings.ts calls this where R7.11 stands in decide, and the bundle's
// constraint vectors (server/compiler/constraint-vectors.ts) have to catch each misreading.
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { compileInputSchema } from '../../runtime/load-bundle.ts';

export const CONSTRAINT_MISREADINGS = [
  { id: 'constraint-before-schema', rule: 'R7.8', what: 'argument constraints checked before the input schema' },
  { id: 'constraint-first-failing', rule: 'R7.11', what: 'the first failing constraint decides, deny or approval (deny does not win)' },
  { id: 'constraint-glob-exact', rule: 'R7.11', what: "a constraint's tool globs matched as exact ids" },
  { id: 'constraint-every-role', rule: 'R7.11', what: 'constraints of roles the subject does not hold apply too' },
  { id: 'constraint-approval-denies', rule: 'R7.11', what: 'a failing require_approval constraint refuses the call' },
] as const;

export type ConstraintMisreading = (typeof CONSTRAINT_MISREADINGS)[number]['id'];

/** What R7.11 answers for parsed arguments: a refusal, an approval, or null to go on to R7.7. */
export function specConstraints(
  bundle: Bundle,
  subjectRoles: readonly string[],
  toolId: string,
  args: unknown,
  m: string | null,
): 'deny' | 'require_approval' | null {
  const roles = bundle.policy.roles ?? {};
  const held = m === 'constraint-every-role' ? Object.keys(roles) : subjectRoles;
  const failing: ('deny' | 'require_approval')[] = [];
  for (const role of held) {
    if (!Object.hasOwn(roles, role)) continue;
    for (const c of roles[role].constraints ?? []) {
      const names = c.tools.some((glob) => (m === 'constraint-glob-exact' ? glob === toolId : globRegExp(glob).test(toolId)));
      if (!names || meets(c.arguments, args)) continue;
      failing.push(c.otherwise);
    }
  }
  if (failing.length === 0) return null;
  if (m === 'constraint-first-failing') return failing[0];
  if (m === 'constraint-approval-denies') return 'deny';
  return failing.includes('deny') ? 'deny' : 'require_approval';
}

function meets(schema: Record<string, unknown>, args: unknown): boolean {
  try {
    return compileInputSchema(schema)(args) === true;
  } catch {
    return false;
  }
}

function globRegExp(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[\\^$.*+?()[\]{}|-]/g, '\\$&'))
      .join('.*')}$`,
  );
}
