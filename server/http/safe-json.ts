import { escapePointer } from '../../policy-schemas/pointer.ts';
import type { ProblemDetail } from '../errors.ts';

/**
 * Keys that reshape objects in JavaScript (`__proto__` swaps the prototype when assigned, and
 * `constructor`/`prototype` are how prototype pollution reaches shared objects). Toolgate refuses
 * them as keys anywhere in outside JSON, so no code downstream (validators, merge patch, the
 * compiler, runtimes in any language) ever has to tell an own key from an inherited one.
 */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Bodies nested deeper than this are refused before any recursive code (validators, schema walks) sees them. */
export const MAX_DEPTH = 64;

export type JsonShapeProblem = ProblemDetail & { code: 'forbidden_key' | 'too_deep' | 'nul_character' };

/**
 * Every forbidden key in a parsed JSON value (pointer of each), and whether it nests deeper than
 * `maxDepth`. Iterative, so a hostile depth cannot overflow the stack.
 */
export function jsonShapeProblems(root: unknown, maxDepth = MAX_DEPTH): JsonShapeProblem[] {
  const problems: JsonShapeProblem[] = [];
  const stack: [unknown, string, number][] = [[root, '', 0]];
  while (stack.length) {
    const [v, pointer, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxDepth) {
      if (!problems.some((p) => p.code === 'too_deep')) problems.push({ pointer: '', message: `nests deeper than ${maxDepth} levels`, code: 'too_deep' });
      continue;
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${pointer}/${i}`, depth + 1]);
      continue;
    }
    // JSON.parse defines `__proto__` as an own key, so Object.keys sees every key the text had.
    for (const key of Object.keys(v).reverse()) {
      const here = `${pointer}/${escapePointer(key)}`;
      if (FORBIDDEN_KEYS.has(key))
        problems.push({ pointer: here, message: `"${key}" is not allowed as a key (it can reshape objects)`, code: 'forbidden_key' });
      stack.push([(v as Record<string, unknown>)[key], here, depth + 1]);
    }
  }
  return problems.sort((a, b) => (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : 0));
}

/**
 * Strings and keys holding U+0000. No field of Toolgate's has a use for it, and PostgreSQL's text
 * cannot store it: refusing it here keeps both engines answering the same 400 instead of one
 * storing it and the other failing.
 */
export function nulProblems(root: unknown): JsonShapeProblem[] {
  const problems: JsonShapeProblem[] = [];
  const found = (pointer: string) => problems.push({ pointer, message: 'contains a NUL character (U+0000), which is not allowed', code: 'nul_character' });
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length) {
    const [v, pointer] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\0')) found(pointer);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${pointer}/${i}`]);
    } else if (v !== null && typeof v === 'object') {
      for (const key of Object.keys(v).reverse()) {
        const here = `${pointer}/${escapePointer(key)}`;
        if (key.includes('\0')) found(here);
        else stack.push([(v as Record<string, unknown>)[key], here]);
      }
    }
  }
  return problems;
}

export type SafeParse =
  | { ok: true; value: unknown }
  | { ok: false; kind: 'syntax'; message: string }
  | { ok: false; kind: 'shape'; problems: JsonShapeProblem[] };

/** JSON.parse, then refusal of forbidden keys and of excessive depth: the one way outside JSON text is read. */
export function parseSafeJson(text: string, maxDepth = MAX_DEPTH): SafeParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, kind: 'syntax', message: (e as Error).message };
  }
  const problems = jsonShapeProblems(value, maxDepth);
  // JSON text can carry U+0000 only as the escape \u0000: the cheap test spares every other body the walk.
  if (text.includes('\\u0000') && !problems.some((p) => p.code === 'too_deep')) problems.push(...nulProblems(value));
  return problems.length ? { ok: false, kind: 'shape', problems } : { ok: true, value };
}

/**
 * A value from a library that parsed JSON itself (e.g. the MCP SDK's zod schemas), reduced to what
 * JSON text holds: own enumerable data only, plain objects. What is stored, hashed and validated is
 * then the same value (an assigned `__proto__` would otherwise be seen by validators and dropped by
 * JSON.stringify).
 */
export function plainJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** A short sentence naming the first problem of a refused parse (for CLI messages). */
export function describeSafeParse(r: Exclude<SafeParse, { ok: true }>): string {
  if (r.kind === 'syntax') return `not valid JSON: ${r.message}`;
  const first = r.problems[0];
  const more = r.problems.length > 1 ? ` (and ${r.problems.length - 1} more)` : '';
  return `${first.pointer || 'the document'} ${first.message}${more}`;
}
