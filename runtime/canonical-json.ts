// The console also runs this in the browser: no node: modules here.
import canonicalizeJson from 'canonicalize';

/**
 * RFC 8785 canonical JSON text of a value, by the `canonicalize` package (throws on values JSON
 * cannot hold: NaN, Infinity, lone surrogates, cycles, a top-level value with no JSON form).
 *
 * Plain JSON data (what bundles are made of) takes a faster road to the same text: a copy with
 * every object's members inserted in sorted order, written by the engine's own JSON.stringify.
 * RFC 8785 writes strings and numbers exactly as JSON.stringify does (the package calls it for
 * them too), so only member order differs, and the copy fixes that. Whatever the copy cannot
 * carry unchanged goes to the package: names a JavaScript object would order as integers or
 * treat as its prototype, `toJSON`, undefined array items, values that are no JSON (NaN,
 * Infinity, functions, symbols, bigints), deep nesting (cycles included), and text whose output
 * shows an escaped surrogate (a lone one, which the package refuses).
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(sortedCopy(value, 0));
  } catch (e) {
    if (e !== NOT_PLAIN) throw e;
  }
  if (text === undefined || ESCAPED_SURROGATE.test(text)) text = canonicalizeJson(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

/**
 * Whether `text` is the RFC 8785 form of `value` by the quick road only: the engine's own
 * JSON.stringify wrote exactly `text`, every object's members are in sorted order (so the engine
 * kept them in text order) and no name is one the engine orders as an integer or treats as the
 * prototype, and no string holds a lone surrogate. False means "not shown this way", not "not
 * canonical": compare with canonicalJson then. `written` is JSON.stringify(value), when the caller has it.
 */
export function isCanonicalText(value: unknown, text: string, written?: string): boolean {
  let engine = written;
  if (engine === undefined) {
    try {
      engine = JSON.stringify(value);
    } catch {
      return false;
    }
  }
  return engine === text && !ESCAPED_SURROGATE.test(text) && membersInOrder(value, 0);
}

function membersInOrder(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!membersInOrder(value[i], depth + 1)) return false;
    return true;
  }
  const names = Object.keys(value);
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    if (i > 0 && !(names[i - 1] < name)) return false;
    const first = name.charCodeAt(0);
    if ((first >= 48 && first <= 57 && INDEX_NAME.test(name)) || name === '__proto__') return false;
    if (!membersInOrder((value as Record<string, unknown>)[name], depth + 1)) return false;
  }
  return true;
}

const NOT_PLAIN = new Error('not plain JSON data');
// JSON.stringify escapes a lone surrogate as \udxxx; a valid pair it writes as is.
const ESCAPED_SURROGATE = /\\ud[89a-f]/;
// Canonical array-index names, which objects order before all others, as numbers.
const INDEX_NAME = /^(?:0|[1-9][0-9]*)$/;
// Deeper than any bundle; a cycle gets here too and is reported by the package.
const MAX_DEPTH = 200;

/** `value` itself when its objects' members are in order already, else a copy where they are. */
function sortedCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw NOT_PLAIN;
      return value;
    case 'object':
      if (value === null) return value;
      break;
    default:
      throw NOT_PLAIN;
  }
  if (depth > MAX_DEPTH) throw NOT_PLAIN;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (item === undefined) throw NOT_PLAIN;
      const copy = sortedCopy(item, depth + 1);
      if (out === null && copy !== item) out = value.slice(0, i);
      if (out !== null) out.push(copy);
    }
    return out ?? value;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') throw NOT_PLAIN;
  const source = value as Record<string, unknown>;
  const names = Object.keys(source);
  // The default sort compares UTF-16 code units, as RFC 8785 orders member names.
  let inOrder = true;
  for (let i = 1; i < names.length; i++) {
    if (names[i - 1] > names[i]) {
      inOrder = false;
      names.sort();
      break;
    }
  }
  // Written anew only when out of order or holding a copy; JSON.stringify leaves undefined members out, as RFC 8785 does.
  let out: Record<string, unknown> | null = inOrder ? null : {};
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const first = name.charCodeAt(0);
    if ((first >= 48 && first <= 57 && INDEX_NAME.test(name)) || name === '__proto__') throw NOT_PLAIN;
    const member = source[name];
    const copy = member === undefined ? undefined : sortedCopy(member, depth + 1);
    if (out === null && copy !== member) {
      out = {};
      for (let j = 0; j < i; j++) out[names[j]] = source[names[j]];
    }
    if (out !== null && copy !== undefined) out[name] = copy;
  }
  return out ?? value;
}
