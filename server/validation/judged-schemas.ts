import { judgeSchema, type SchemaRole } from './input-schema.ts';

export type SchemaProblem = { pointer: string; message: string; code: string };

// Judgements by role and schema text: an inventory mostly recompiles with the schemas it had, and a
// draft is judged at every save and compile with mostly the same argument constraints.
const judged = new Map<string, SchemaProblem[]>();
const MAX_JUDGED = 20_000;

/** judgeSchema's problems with a schema in a role, pointers relative to it; remembered by its text. */
export function judgedSchemaProblems(schema: unknown, role: SchemaRole): SchemaProblem[] {
  const key = `${role}:${JSON.stringify(schema) ?? 'undefined'}`;
  let problems = judged.get(key);
  if (!problems) {
    problems = judgeSchema(schema, '', role).map((p) => ({ pointer: p.pointer, message: p.message, code: p.code ?? 'input_schema' }));
    if (judged.size >= MAX_JUDGED) judged.clear();
    judged.set(key, problems);
  }
  return problems;
}
