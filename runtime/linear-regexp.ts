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
    return { test: re.test, toString: () => `re2:${pattern}` };
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
    return { test: memoizedTest(re.test), toString: () => `re2:${pattern}` };
  },
  { code: linearRegExp.code },
);

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
