// The console also runs this in the browser: no node: modules here.
import { MAX_NESTING } from './json-schema-dialect.ts';

/**
 * Reading a call's arguments as docs/spec.md says (R7.5, R7.11): JSON text that is also I-JSON
 * (RFC 7493), so every runtime, whatever its JSON library, reads the same value:
 * - no member name twice in one object (JSON.parse would keep the last, other parsers the first);
 * - an integer literal (no fraction, no exponent) within ±(2^53 − 1): beyond it doubles round
 *   (2^53 + 1 reads as 2^53) and parsers with big integers would disagree;
 * - no number that overflows a double (`1e400` would read as Infinity);
 * - no lone surrogate, escaped or not.
 * Nesting deeper than MAX_NESTING arrays and objects is reported apart: it is valid JSON that the
 * runtime will not check (a `validation` answer, not `invalid_json`).
 */
export type ParsedArguments = { ok: true; value: unknown } | { ok: false; code: 'invalid_json' | 'too_deep'; message: string };

const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER); // 9007199254740991
const SURROGATE_HINT = /\\u[dD][89a-fA-F]|[\uD800-\uDFFF]/;
// By UTF-16 code unit (no `u` flag): a high surrogate not followed by a low one, or a low one alone.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function parseArguments(text: string): ParsedArguments {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, code: 'invalid_json', message: 'Invalid tool arguments JSON' };
  }
  const scan = scanText(text, null);
  if (scan.problem) return { ok: false, code: 'invalid_json', message: scan.problem };
  if (SURROGATE_HINT.test(text) && holdsLoneSurrogate(value)) {
    return { ok: false, code: 'invalid_json', message: 'the arguments hold a lone surrogate, which is not I-JSON' };
  }
  if (scan.depth > MAX_NESTING) return { ok: false, code: 'too_deep', message: `the arguments nest deeper than ${MAX_NESTING} levels` };
  return { ok: true, value };
}

/**
 * The JSON pointer token path of every member named `name` in valid JSON text, in document order
 * (R7.10): member names as written, array positions as numbers.
 */
export function membersNamed(text: string, name: string): (string | number)[][] {
  const found: (string | number)[][] = [];
  scanText(text, { name, found });
  return found;
}

type Frame = { object: boolean; index: number; key: string | null; keys: Set<string> | null };

/**
 * One pass over valid JSON text (JSON.parse accepted it): the deepest nesting, the first I-JSON
 * problem among member names and number literals, and, when asked, the paths of members named so.
 * Iterative: any depth is safe.
 */
function scanText(text: string, members: { name: string; found: (string | number)[][] } | null): { depth: number; problem: string | null } {
  const stack: Frame[] = [];
  let depth = 0;
  let i = 0;
  const n = text.length;
  // In an object, a string is a member name when it comes after `{` or `,`.
  let expectKey = false;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const object = c === 0x7b;
      stack.push({ object, index: 0, key: null, keys: object ? new Set() : null });
      if (stack.length > depth) depth = stack.length;
      expectKey = object;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
      i++;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top.object) expectKey = true;
      else top.index++;
      i++;
    } else if (c === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === 0x5c /* \ */) {
          escaped = true;
          j += 2;
        } else if (d === 0x22) break;
        else j++;
      }
      if (expectKey) {
        const key = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
        const top = stack[stack.length - 1];
        if (top.keys!.has(key)) return { depth, problem: 'a member name appears twice in one object, which is not I-JSON' };
        top.keys!.add(key);
        top.key = key;
        if (members && key === members.name) members.found.push(pathOf(stack));
        expectKey = false;
      }
      i = j + 1;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      let j = i;
      let integer = true;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === 0x2e /* . */ || d === 0x65 /* e */ || d === 0x45 /* E */) integer = false;
        else if (!(d === 0x2d || d === 0x2b || (d >= 0x30 && d <= 0x39))) break;
        j++;
      }
      const literal = text.slice(i, j);
      if (integer) {
        const digits = literal.startsWith('-') ? literal.slice(1) : literal;
        if (digits.length > MAX_SAFE_DIGITS.length || (digits.length === MAX_SAFE_DIGITS.length && digits > MAX_SAFE_DIGITS)) {
          return { depth, problem: 'an integer in the arguments is beyond ±(2^53 − 1), which is not I-JSON' };
        }
      } else if (!Number.isFinite(Number(literal))) {
        return { depth, problem: 'a number in the arguments is too large for a double, which is not I-JSON' };
      }
      i = j;
    } else i++;
  }
  return { depth, problem: null };
}

function pathOf(stack: readonly Frame[]): (string | number)[] {
  return stack.map((f) => (f.object ? f.key! : f.index));
}

/** Whether any string or member name of a parsed value holds a lone surrogate (iterative). */
function holdsLoneSurrogate(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return true;
    } else if (Array.isArray(v)) stack.push(...v);
    else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (LONE_SURROGATE.test(k)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}
