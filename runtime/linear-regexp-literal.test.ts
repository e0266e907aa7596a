import { describe, expect, it } from 'vitest';
import { compileLinearPattern, linearRegExp, literalTest } from './linear-regexp.ts';

const PATTERNS = ['^acme/', '@acme\\.example$', '^acme/api$', 'acme', '^$', '^', '$', '', 'a\\/b', '\\$x', 'x\\^', '^a\\-b$', '^x y,z:'];
const STRINGS = [
  '',
  'acme/',
  'acme/api',
  'acme/api2',
  'xacme/',
  'boss@acme.example',
  'boss@acmeXexample',
  'boss@acme.example\n',
  'a/b',
  '$x',
  'x^',
  'a-b',
  'x y,z:1',
  'ACME/',
  'acme/\u00e9',
];

describe('literal patterns', () => {
  it('answer by string comparison exactly as RE2 does', () => {
    for (const p of PATTERNS) {
      const literal = literalTest(p);
      expect(literal, p).not.toBeNull();
      const re2 = compileLinearPattern(p);
      for (const s of STRINGS) expect(literal!(s), `${JSON.stringify(p)} on ${JSON.stringify(s)}`).toBe(re2.test(s));
    }
  });

  it('are only plain text: any operator, class, group or letter escape goes to RE2', () => {
    for (const p of ['^a.b', 'a*', '^(a)$', '[a]', 'a|b', '\\d', '^a{2}$', 'a+', 'x?', '\\w', 'caf\u00e9', 'a$b']) expect(literalTest(p), p).toBeNull();
  });

  it("serve ajv's engine, which still refuses what RE2 cannot run", () => {
    expect(linearRegExp('^acme/', 'u').test('acme/x')).toBe(true);
    expect(() => linearRegExp('(?<=a)b', 'u')).toThrow();
  });
});
