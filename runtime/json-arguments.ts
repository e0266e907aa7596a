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
 * Reading arguments handed over as a value rather than text (R14.6): they must be a JSON value, the
 * value some JSON text would read as, because that text is what the upstream receives. Finite
 * numbers, strings and member names without a lone surrogate, booleans, null, arrays and plain
 * objects (prototype Object.prototype or null), nested within MAX_NESTING. Anything else (NaN,
 * Infinity, undefined, a hole in an array, a function, a symbol, a BigInt, a Date, Map or class
 * instance, an object that contains itself) is `invalid_json`: JSON.stringify would send null, drop
 * it or throw, so the schema would have judged something the tool never sees.
 * Runs on every call handed over so: a small tree is one recursive pass with no allocation; a
 * shared object (a DAG, which objects can make and text cannot) is walked once.
 */
export function readArgumentsValue(root: unknown): ParsedArguments {
  if (typeof root !== 'object' || root === null) {
    const problem = scalarProblem(root);
    return problem === null ? { ok: true, value: root } : { ok: false, code: 'invalid_json', message: problem };
  }
  // Most arguments are small trees: walked by plain recursion, with no allocation. Deeper than the
  // limit (a cycle is infinitely deep) or larger than the budget (a shared object, expanded, may be
  // huge) goes to the walk that remembers what it saw, which alone may answer too_deep.
  treeBudget = TREE_BUDGET;
  const tree = walkTree(root, 1);
  if (tree === null) return { ok: true, value: root };
  const walked = tree === GIVE_UP ? walkValue(root) : { problem: tree, height: 0 };
  if (walked.problem !== null) return { ok: false, code: 'invalid_json', message: walked.problem };
  if (walked.height > MAX_NESTING) return { ok: false, code: 'too_deep', message: `the arguments nest deeper than ${MAX_NESTING} levels` };
  return { ok: true, value: root };
}

const GIVE_UP = 0;
// Members and items the recursive walk looks at before it leaves the value to walkValue: a 1 MiB
// call holds ~70,000. Only an object shared many ways (expanded, past the budget) pays this work
// twice, which no parsed JSON can be: a millisecond or two, once.
const TREE_BUDGET = 100_000;
let treeBudget = 0;

/** The first problem in a tree within the nesting limit and the budget; GIVE_UP past either. */
function walkTree(node: object, depth: number): string | null | typeof GIVE_UP {
  if (depth > MAX_NESTING) return GIVE_UP;
  if (Array.isArray(node)) {
    treeBudget -= node.length;
    if (treeBudget < 0) return GIVE_UP;
    for (let i = 0; i < node.length; i++) {
      const v: unknown = node[i];
      const problem = typeof v === 'object' && v !== null ? walkTree(v, depth + 1) : scalarProblem(v);
      if (problem !== null) return problem;
    }
    return null;
  }
  if (!isPlainObject(node)) return NOT_PLAIN;
  for (const key in node) {
    if (!Object.hasOwn(node, key)) continue;
    if (--treeBudget < 0) return GIVE_UP;
    if (!isWellFormed(key)) return LONE_SURROGATE_MESSAGE;
    const v: unknown = (node as Record<string, unknown>)[key];
    const problem = typeof v === 'object' && v !== null ? walkTree(v, depth + 1) : scalarProblem(v);
    if (problem !== null) return problem;
  }
  return null;
}

type ValueFrame = { node: object; keys: string[] | null; next: number; height: number };

/**
 * Every member of a nested value, depth first without recursion (any depth is safe): the first
 * problem, else the height (the outermost counting 1). A container still being walked that is met
 * again is a cycle; one walked already is taken at its known height, not walked again.
 */
function walkValue(root: object): { problem: string | null; height: number } {
  const heights = new Map<object, number>();
  const frames: ValueFrame[] = [];
  const enter = (node: object): string | null => {
    const array = Array.isArray(node);
    if (!array && !isPlainObject(node)) return NOT_PLAIN;
    heights.set(node, ON_PATH);
    frames.push({ node, keys: array ? null : Object.keys(node), next: 0, height: 1 });
    return null;
  };
  const first = enter(root);
  if (first !== null) return { problem: first, height: 0 };
  let height = 0;
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    const { node, keys } = frame;
    if (frame.next < (keys === null ? (node as unknown[]).length : keys.length)) {
      let v: unknown;
      if (keys === null) v = (node as unknown[])[frame.next++];
      else {
        const key = keys[frame.next++];
        if (!isWellFormed(key)) return { problem: LONE_SURROGATE_MESSAGE, height: 0 };
        v = (node as Record<string, unknown>)[key];
      }
      if (typeof v !== 'object' || v === null) {
        const problem = scalarProblem(v);
        if (problem !== null) return { problem, height: 0 };
        continue;
      }
      const known = heights.get(v);
      if (known === ON_PATH) return { problem: 'the arguments contain themselves (a cycle), which no JSON text can', height: 0 };
      if (known !== undefined) {
        if (known + 1 > frame.height) frame.height = known + 1;
        continue;
      }
      const problem = enter(v);
      if (problem !== null) return { problem, height: 0 };
    } else {
      frames.pop();
      heights.set(node, frame.height);
      const parent = frames[frames.length - 1];
      if (parent === undefined) height = frame.height;
      else if (frame.height + 1 > parent.height) parent.height = frame.height + 1;
    }
  }
  return { problem: null, height };
}

const ON_PATH = -1;
const NOT_PLAIN = 'the arguments hold an object that is not a plain object or array (a Date, Map or class instance), which is not a JSON value';
const LONE_SURROGATE_MESSAGE = 'the arguments hold a lone surrogate, which is not I-JSON';

/** Why a value that is not an array or object is not a JSON value, or null when it is one. */
function scalarProblem(v: unknown): string | null {
  switch (typeof v) {
    case 'string':
      return isWellFormed(v) ? null : LONE_SURROGATE_MESSAGE;
    case 'number':
      return Number.isFinite(v) ? null : 'the arguments hold a number that is not finite (NaN or Infinity), which is not a JSON value';
    case 'boolean':
      return null;
    case 'object':
      return null; // null itself
    case 'undefined':
      return 'the arguments hold undefined (a member set to it, or a hole in an array), which is not a JSON value';
    case 'bigint':
      return 'the arguments hold a BigInt, which is not a JSON value (pass a number, or a string for a large integer)';
    default:
      return `the arguments hold a ${typeof v}, which is not a JSON value`;
  }
}

function isPlainObject(node: object): boolean {
  const proto = Object.getPrototypeOf(node);
  return proto === Object.prototype || proto === null;
}

// String.prototype.isWellFormed (ES2024) where the engine has it; the pattern elsewhere.
const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

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
