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
