import { escapePointer } from '../../policy-schemas/pointer.ts';
import type { TenantPolicy } from '../../policy-schemas/types.gen.ts';
import { judgedSchemaProblems } from './judged-schemas.ts';

export type ConstraintProblem = { pointer: string; message: string; code: string };

/**
 * The rules of a role's argument constraints (DESIGN "Argument constraints"), run by every save of
 * a tenant policy and by the compiler through judgeTenant: exact tool ids name inventory tools (as
 * allow and deny), and each `arguments` schema is judged by the one schema judge (judgeSchema, as
 * `arguments`), so a constraint is held to the very dialect and limits of input schemas and every
 * runtime can compile it.
 * Pointers are `/policy/roles/<role>/constraints/<i>/…`.
 */
export function judgeConstraints(policy: TenantPolicy, toolIds: ReadonlySet<string>): ConstraintProblem[] {
  const problems: ConstraintProblem[] = [];
  for (const [name, role] of Object.entries(policy.roles ?? {})) {
    (role.constraints ?? []).forEach((c, i) => {
      const at = `/policy/roles/${escapePointer(name)}/constraints/${i}`;
      c.tools.forEach((id, j) => {
        if (!id.includes('*') && !toolIds.has(id)) problems.push({ pointer: `${at}/tools/${j}`, message: `unknown tool "${id}"`, code: 'unknown_reference' });
      });
      for (const p of argumentsSchemaProblems(c.arguments)) problems.push({ ...p, pointer: `${at}/arguments${p.pointer}` });
    });
  }
  return problems;
}

/** The schema judge's problems with a constraint schema, pointers relative to it. */
function argumentsSchemaProblems(schema: unknown): ConstraintProblem[] {
  const problems = judgedSchemaProblems(schema, 'arguments');
  // Arguments are an object by the time a constraint is checked: a root type that excludes
  // objects would refuse every call, which is a mistake, never a policy.
  const type = (schema as { type?: unknown } | null)?.type;
  if (type !== undefined && type !== 'object' && !(Array.isArray(type) && type.includes('object'))) {
    return [...problems, { pointer: '/type', message: 'must allow "object": a call\'s arguments are an object', code: 'input_schema' }];
  }
  return problems;
}
