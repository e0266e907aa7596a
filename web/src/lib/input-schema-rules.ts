import { useEffect, useMemo, useState } from 'react';
import type { PointerError } from '../components/json-editor.tsx';

type Rules = (schema: Record<string, unknown>, pointer?: string) => PointerError[];

/**
 * The server's own restricted-subset rules for tool input schemas (the very module the API uses),
 * loaded on demand, applied to `text` on every change. Empty while the text does not parse: the
 * editor shows the syntax error then.
 */
export function useInputSchemaProblems(text: string, enabled = true): PointerError[] {
  const [rules, setRules] = useState<Rules | null>(null);
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    import('../../../server/validation/input-schema.ts').then(
      (m) => live && setRules(() => m.subsetProblems),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [enabled]);
  return useMemo(() => {
    if (!enabled) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return [];
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return [{ pointer: '', message: 'must be a JSON Schema object' }];
    const typos = typeValueProblems(parsed, '');
    const named = new Set(typos.map((e) => e.pointer));
    return [...typos, ...(rules ? rules(parsed as Record<string, unknown>, '').filter((e) => !named.has(e.pointer)) : [])];
  }, [text, rules, enabled]);
}

const JSON_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];
const ONE = ['items', 'not', 'if', 'then', 'else', 'additionalProperties', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'];
const MANY = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const NAMED = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

/**
 * Every `type` value that is no JSON type, named with its pointer and, when it is a near miss, the
 * type meant (`"strng"` → did you mean "string"?). A meta-schema check only says "must be equal
 * to one of the allowed values" three ways; this says which value and what to write instead.
 */
export function typeValueProblems(schema: unknown, pointer: string): PointerError[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [];
  const s = schema as Record<string, unknown>;
  const out: PointerError[] = [];
  const types = typeof s.type === 'string' ? [[s.type, `${pointer}/type`]] : Array.isArray(s.type) ? s.type.map((v, i) => [v, `${pointer}/type/${i}`]) : [];
  for (const [value, at] of types as [unknown, string][]) {
    if (typeof value === 'string' && JSON_TYPES.includes(value)) continue;
    const near = typeof value === 'string' ? JSON_TYPES.find((t) => editDistance(t, value.toLowerCase()) <= 2) : undefined;
    out.push({
      pointer: at,
      message: `${JSON.stringify(value)} is not a JSON Schema type: use one of ${JSON_TYPES.join(', ')}${near ? ` (did you mean "${near}"?)` : ''}`,
    });
  }
  const esc = (k: string) => k.replaceAll('~', '~0').replaceAll('/', '~1');
  for (const k of ONE) if (k in s) out.push(...typeValueProblems(s[k], `${pointer}/${k}`));
  for (const k of MANY) if (Array.isArray(s[k])) (s[k] as unknown[]).forEach((sub, i) => out.push(...typeValueProblems(sub, `${pointer}/${k}/${i}`)));
  for (const k of NAMED) {
    const m = s[k];
    if (m && typeof m === 'object' && !Array.isArray(m))
      for (const [name, sub] of Object.entries(m)) out.push(...typeValueProblems(sub, `${pointer}/${k}/${esc(name)}`));
  }
  return out;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const here = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = here;
    }
  }
  return row[b.length]!;
}
