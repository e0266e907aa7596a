import { escapePointer } from '../../../policy-schemas/pointer.ts';

/** Stable, readable JSON for editors and diffs. */
export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? '';
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep equality of JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

/** RFC 7396 merge patch turning `from` into `to`. */
export function createMergePatch(from: unknown, to: unknown): unknown {
  if (!isObject(from) || !isObject(to)) return to;
  const patch: Record<string, unknown> = {};
  for (const k of Object.keys(from)) if (from[k] !== undefined && to[k] === undefined) patch[k] = null;
  for (const [k, v] of Object.entries(to)) {
    if (v === undefined || jsonEqual(from[k], v)) continue;
    patch[k] = isObject(from[k]) && isObject(v) ? createMergePatch(from[k], v) : v;
  }
  return patch;
}

/** RFC 7396: applies a merge patch. */
export function applyMergePatch<T>(target: T, patch: unknown): T {
  if (!isObject(patch)) return patch as T;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out as T;
}

export type Change = { path: string; kind: 'added' | 'removed' | 'changed'; before?: unknown; after?: unknown };

/** The leaf-level differences between two JSON values, with JSON-pointer paths. */
export function diffJson(before: unknown, after: unknown, path = ''): Change[] {
  if (jsonEqual(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => {
      const p = `${path}/${escapePointer(k)}`;
      if (before[k] === undefined) return [{ path: p, kind: 'added' as const, after: after[k] }];
      if (after[k] === undefined) return [{ path: p, kind: 'removed' as const, before: before[k] }];
      return diffJson(before[k], after[k], p);
    });
  }
  if (before === undefined || before === null) return [{ path: path || '/', kind: 'added', after }];
  if (after === undefined || after === null) return [{ path: path || '/', kind: 'removed', before }];
  return [{ path: path || '/', kind: 'changed', before, after }];
}

/**
 * Where each JSON pointer's value starts in a JSON text, as 1-based line numbers.
 * Used to show a server error (given as a pointer) at the offending line of an editor.
 */
export function pointerLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  let i = 0;
  let line = 1;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) {
      if (text[i] === '\n') line++;
      i++;
    }
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return '';
    }
  };
  const value = (ptr: string): void => {
    ws();
    lines.set(ptr, line);
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      while (i < text.length) {
        ws();
        const keyLine = line;
        const key = str();
        const child = `${ptr}/${escapePointer(key)}`;
        ws();
        i++; // colon
        value(child);
        if (!lines.has(child)) lines.set(child, keyLine);
        ws();
        if (text[i] === ',') i++;
        else {
          i++;
          return;
        }
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      let n = 0;
      while (i < text.length) {
        value(`${ptr}/${n++}`);
        ws();
        if (text[i] === ',') i++;
        else {
          i++;
          return;
        }
      }
    } else if (c === '"') str();
    else while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
  };
  try {
    value('');
  } catch {
    /* partial map is still useful */
  }
  return lines;
}

/** The line of the nearest ancestor pointer present in the map (errors may point below what exists). */
export function lineOfPointer(lines: Map<string, number>, pointer: string): number | undefined {
  let p = pointer;
  for (;;) {
    const l = lines.get(p);
    if (l !== undefined) return l;
    if (!p) return undefined;
    p = p.slice(0, p.lastIndexOf('/'));
  }
}

/**
 * Where a JSON text first breaks, as a 1-based line and a message, or null when it parses.
 * Engines word (and sometimes omit) positions differently, so the scan is done here.
 */
export function jsonSyntaxError(text: string): { line: number; message: string } | null {
  let i = 0;
  const fail = (message: string): never => {
    throw Object.assign(new Error(message), { at: i });
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(`Unexpected ${describe(text[i])}`);
  };
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\n') fail('Unterminated string');
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('Bad unicode escape');
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? '')) fail('Bad escape');
      }
      i++;
    }
    if (i >= text.length) fail('Unterminated string');
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`Expected a property name, found ${describe(text[i])}`);
        string();
        ws();
        if (text[i] !== ':') fail(`Expected ":", found ${describe(text[i])}`);
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail(`Expected "," or "}", found ${describe(text[i])}`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail(`Expected "," or "]", found ${describe(text[i])}`);
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail(`Unexpected ${describe(c)}`);
    i += m![0].length;
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`Unexpected ${describe(text[i])} after the value`);
    return null;
  } catch (err) {
    const at = (err as { at?: number }).at ?? i;
    return { line: text.slice(0, at).split('\n').length, message: (err as Error).message };
  }
}

function describe(c: string | undefined): string {
  return c === undefined ? 'end of text' : JSON.stringify(c);
}
