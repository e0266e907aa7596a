// The console also runs this in the browser: no node: modules here.
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';

/**
 * A `pattern` as an RE2 program: matching takes time linear in the input, whatever the pattern
 * (`^(a+)+$` included), so no schema can stall the event loop. ECMAScript-only syntax that needs
 * backtracking (lookaround, backreferences) does not compile and throws.
 */
export function compileLinearPattern(pattern: string): { test(s: string): boolean } {
  const re = RE2JS.compile(RE2JS.translateRegExp(pattern));
  return { test: (s: string) => re.test(s) };
}

/**
 * ajv's `code.regExp` engine backed by re2js. ajv caches compiled patterns by `toString()`, so
 * each one names its own source.
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    const re = compileLinearPattern(pattern);
    // Plain text (`^acme/`, `@acme\.example$`), as argument constraints mostly are: a string
    // comparison answers what re2js would, without its microseconds a test.
    return { test: literalTest(pattern) ?? re.test, toString: () => `re2:${pattern}` };
  },
  { code: 'require("re2js").RE2JS' },
);

/**
 * linearRegExp remembering its answers for short strings, for the server's own schemas: their few
 * patterns check the same tool ids, group names and paths on every compile and request, and re2js
 * matches in JavaScript, microseconds a test. Bounded per pattern; the runtime's engine for input
 * schemas (arbitrary arguments, any number of patterns) stays linearRegExp.
 */
export const memoizedLinearRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    const re = compileLinearPattern(pattern);
    return { test: memoizedTest(boundedNativeTest(pattern, re.test)), toString: () => `re2:${pattern}` };
  },
  { code: linearRegExp.code },
);

// Inputs up to this long may run on ECMAScript's own matcher when a pattern has two unbounded
// quantifiers (its backtracking then takes at most some length² steps).
const NATIVE_QUADRATIC_MAX_LENGTH = 128;
// The most choices bounded quantifiers (`{0,63}`) may add, multiplied together.
const NATIVE_MAX_BOUNDED_CHOICES = 64;

/**
 * The RE2 test, or, for a pattern simple enough that both engines mean the same by it and
 * backtracking cannot blow up on it, the engine's own RegExp (re2js matches in JavaScript, slow
 * before it is optimised; a server's first publish checks thousands of ids and hashes with it).
 * Simple: anchored by `^` and `$`, no alternation, no `.` or class escapes (`\d`, `\s`, `\p{…}`),
 * only ASCII, groups only as an optional run of plain atoms. Such a pattern with one unbounded
 * quantifier backtracks in linear time, with two in quadratic time, taken only for short inputs.
 */
function boundedNativeTest(pattern: string, linear: (s: string) => boolean): (s: string) => boolean {
  const shape = simplePatternShape(pattern);
  if (shape === null || shape.unbounded > 2 || shape.choices > NATIVE_MAX_BOUNDED_CHOICES) return linear;
  let native: RegExp;
  try {
    native = new RegExp(pattern, 'u');
  } catch {
    return linear;
  }
  if (shape.unbounded <= 1) return (s) => native.test(s);
  return (s) => (s.length <= NATIVE_QUADRATIC_MAX_LENGTH ? native.test(s) : linear(s));
}

const SPECIAL = new Set([...'\\^$.|?*+()[]{}']);

/**
 * A test by string comparison for a pattern that is printable ASCII text with escapes only of
 * punctuation, optionally anchored by `^` and `$` (start and end of the whole string in RE2 and
 * ECMAScript alike): the same answers as either engine. Null for any other pattern.
 */
export function literalTest(pattern: string): ((s: string) => boolean) | null {
  let i = 0;
  const start = pattern.startsWith('^');
  if (start) i = 1;
  let text = '';
  let end = false;
  for (; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined || !isAsciiPunctuation(next)) return null;
      text += next;
      i++;
    } else if (c === '$' && i === pattern.length - 1) {
      end = true;
    } else if (isPlain(c)) {
      text += c;
    } else {
      return null;
    }
  }
  if (start && end) return (s) => s === text;
  if (start) return (s) => s.startsWith(text);
  if (end) return (s) => s.endsWith(text);
  return (s) => s.includes(text);
}
// What an escape may name here: the characters ECMAScript's `u` mode lets one escape.
const isAsciiPunctuation = (c: string) => c.length === 1 && '^$\\.*+?()[]{}|/-'.includes(c);
const isPlain = (c: string) => c >= ' ' && c <= '~' && !SPECIAL.has(c);

/**
 * The unbounded quantifiers (`*`, `+`, `{n,}`) of a pattern of the simple form described above and
 * the product of the choices its bounded ones leave (`{2,5}`: 4), or null for any other pattern.
 */
export function simplePatternShape(pattern: string): { unbounded: number; choices: number } | null {
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return null;
  const body = pattern.slice(1, -1);
  let i = 0;
  let unbounded = 0;
  let choices = 1;
  // One atom: a plain ASCII character, an escaped ASCII punctuation character, or a class of those.
  const atom = (): boolean => {
    const c = body[i];
    if (c === undefined) return false;
    if (c === '\\') {
      if (!isAsciiPunctuation(body[i + 1] ?? '')) return false;
      i += 2;
      return true;
    }
    if (c === '[') {
      i++;
      if (body[i] === '^' || body[i] === ']') return false;
      while (body[i] !== ']') {
        const d = body[i];
        if (d === undefined || d === '[') return false;
        if (d === '\\') {
          if (!isAsciiPunctuation(body[i + 1] ?? '')) return false;
          i += 2;
        } else if (d >= ' ' && d <= '~') i++;
        else return false;
      }
      i++;
      return true;
    }
    if (!isPlain(c)) return false;
    i++;
    return true;
  };
  // A quantifier after an atom, if any; false for one outside the simple form (lazy, malformed).
  const quantifier = (): boolean => {
    const c = body[i];
    if (c === '*' || c === '+') {
      i++;
      unbounded++;
    } else if (c === '?') {
      i++;
      choices *= 2;
    } else if (c === '{') {
      const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(body.slice(i));
      if (!m) return false;
      i += m[0].length;
      if (m[2] !== undefined && m[3] === '') unbounded++;
      else if (m[3] !== undefined) {
        const min = Number(m[1]);
        const max = Number(m[3]);
        if (max < min) return false;
        choices *= max - min + 1;
      }
    } else return true;
    return body[i] !== '?' && body[i] !== '+';
  };
  while (i < body.length) {
    if (body[i] === '(') {
      // An optional run of plain atoms: `(sha256:)?` or `(?:…)?`.
      i += body.startsWith('(?:', i) ? 3 : 1;
      while (body[i] !== ')') if (!atom()) return null;
      i++;
      if (body[i] !== '?') return null;
      i++;
      choices *= 2;
      if (body[i] === '?') return null;
      continue;
    }
    if (!atom() || !quantifier()) return null;
  }
  return { unbounded, choices };
}

const MEMO_ENTRIES = 2048;
const MEMO_MAX_LENGTH = 128;

function memoizedTest(test: (s: string) => boolean): (s: string) => boolean {
  const answers = new Map<string, boolean>();
  return (s: string) => {
    if (s.length > MEMO_MAX_LENGTH) return test(s);
    let answer = answers.get(s);
    if (answer === undefined) {
      answer = test(s);
      if (answers.size >= MEMO_ENTRIES) answers.clear();
      answers.set(s, answer);
    }
    return answer;
  };
}
