// The console also runs this in the browser: no node: modules here.

/**
 * RFC 8785 canonical JSON text of a value (throws on values JSON cannot hold: NaN, Infinity, lone
 * surrogates, cycles, a top-level value with no JSON form).
 *
 * Written here rather than taken from the `canonicalize` package because it sits on the hot path
 * of every publish (a 2,000-tool bundle is a megabyte of it) and of every verification. RFC 8785
 * adopts JSON.stringify's strings and numbers as they are (§3.2.2.2, §3.2.2.3) and differs only in
 * member order, so the value is walked once to put every object's members in UTF-16 order (copying
 * only objects that are not already in it: parsed canonical bytes are) and the engine's native
 * JSON.stringify writes the text. An object with an array-index name ("10", "9"), which engines
 * always enumerate in numeric order, is written member by member instead. The package stays the
 * reference: a test checks both agree on generated values.
 */
export function canonicalJson(value: unknown): string {
  const walk: Walk = { stack: [], indexNames: false };
  const ordered = inOrder(value, walk);
  const text = walk.indexNames ? write(value, new Set()) : JSON.stringify(ordered);
  if (text === undefined) throw new TypeError('value has no JSON form');
  // JSON.stringify escapes a lone surrogate as \udXXX (and only then writes such an escape).
  if (!walk.indexNames && text.includes('\\ud') && LONE_SURROGATE_ESCAPE.test(text)) throw new Error('Lone surrogate is not allowed');
  return text;
}

type Walk = { stack: object[]; indexNames: boolean };

const LONE_SURROGATE_ESCAPE = /(?<!\\)(?:\\\\)*\\ud[89a-f]/;
// Past this depth a value is checked for cycles at every level (shallower, a cycle soon gets here).
const CYCLE_CHECK_DEPTH = 64;

/** The value with every object's members in UTF-16 order; the same value where it already is. */
function inOrder(value: unknown, walk: Walk): unknown {
  if (typeof value === 'number') {
    if (Number.isNaN(value)) throw new Error('NaN is not allowed');
    if (!Number.isFinite(value)) throw new Error('Infinity is not allowed');
    return value;
  }
  if (value === null || typeof value !== 'object') return value;
  const stack = walk.stack;
  if (stack.length >= CYCLE_CHECK_DEPTH && stack.includes(value)) throw new Error('Circular reference detected');
  stack.push(value);
  let out: unknown = value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    out = inOrder((value as { toJSON(): unknown }).toJSON(), walk);
  } else if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = inOrder(value[i], walk);
      if (item !== value[i] && copy === null) copy = value.slice(0, i);
      if (copy !== null) copy.push(item);
    }
    if (copy !== null) out = copy;
  } else {
    const object = value as Record<string, unknown>;
    const names = Object.keys(object);
    let sorted = true;
    for (let i = 0; i < names.length; i++) {
      const c = names[i].charCodeAt(0);
      if (c >= 48 && c <= 57 && isArrayIndex(names[i])) walk.indexNames = true;
      if (i > 0 && names[i - 1] > names[i]) sorted = false;
    }
    if (sorted) {
      // Already in order: copied only when a member changes (a nested object out of order).
      let copy: Record<string, unknown> | null = null;
      for (let i = 0; i < names.length; i++) {
        const member = inOrder(object[names[i]], walk);
        if (member !== object[names[i]] && copy === null) {
          copy = {};
          for (let j = 0; j < i; j++) put(copy, names[j], object[names[j]]);
        }
        if (copy !== null) put(copy, names[i], member);
      }
      if (copy !== null) out = copy;
    } else {
      names.sort();
      const copy: Record<string, unknown> = {};
      for (const name of names) put(copy, name, inOrder(object[name], walk));
      out = copy;
    }
  }
  stack.pop();
  return out;
}

/** Sets a member; "__proto__" as an own member (plain assignment would set the prototype). */
function put(o: Record<string, unknown>, name: string, v: unknown): void {
  if (name === '__proto__') Object.defineProperty(o, name, { value: v, enumerable: true, writable: true, configurable: true });
  else o[name] = v;
}

function isArrayIndex(name: string): boolean {
  const n = Number(name);
  return Number.isInteger(n) && n >= 0 && n < 4294967295 && String(n) === name;
}

// A string holding a surrogate that is not half of a pair has no UTF-8 form (RFC 8785 §3.2.2.2).
const LONE_SURROGATE = /\p{Surrogate}/u;

function string(s: string): string {
  if (LONE_SURROGATE.test(s)) throw new Error('Lone surrogate is not allowed');
  return JSON.stringify(s);
}

/** Member by member, for objects whose names engines would reorder; undefined for what JSON leaves out. */
function write(value: unknown, open: Set<object>): string | undefined {
  switch (typeof value) {
    case 'string':
      return string(value);
    case 'number':
      if (Number.isNaN(value)) throw new Error('NaN is not allowed');
      if (!Number.isFinite(value)) throw new Error('Infinity is not allowed');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (open.has(value)) throw new Error('Circular reference detected');
  open.add(value);
  let out: string | undefined;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    out = write((value as { toJSON(): unknown }).toJSON(), open);
  } else if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += write(value[i], open) ?? 'null';
    }
    out += ']';
  } else {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object).sort();
    out = '{';
    let first = true;
    for (const key of keys) {
      const member = write(object[key], open);
      if (member === undefined) continue;
      out += first ? `${string(key)}:${member}` : `,${string(key)}:${member}`;
      first = false;
    }
    out += '}';
  }
  open.delete(value);
  return out;
}
