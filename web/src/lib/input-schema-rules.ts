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
    return rules ? rules(parsed as Record<string, unknown>, '') : [];
  }, [text, rules, enabled]);
}
