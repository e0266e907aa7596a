// Compiler golden files: test/fixtures/compile/<case>.input.json → <case>.golden.json.
// Rewritten only with UPDATE_GOLDEN=1; otherwise any difference fails.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validate } from '../../policy-schemas/index.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import type { CompileOptions, Snapshot } from '../../server/compiler/compile-bundle.ts';

const dir = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/compile');
const cases = readdirSync(dir)
  .filter((f) => f.endsWith('.input.json'))
  .map((f) => f.replace(/\.input\.json$/, ''))
  .sort();

function compileCase(name: string): string {
  const input = JSON.parse(readFileSync(join(dir, `${name}.input.json`), 'utf8')) as { snapshot: Snapshot; options: CompileOptions };
  const r = compileBundle(input.snapshot, input.options);
  const out = r.ok ? { ok: true, revision: r.revision, bytes: r.bytes.length, bundle: r.bundle } : { ok: false, errors: r.errors };
  return `${JSON.stringify(out, null, 2)}\n`;
}

describe('compiler golden files', () => {
  it('has cases to check', () => {
    expect(cases.length).toBeGreaterThanOrEqual(4);
  });

  it('writes bundles that conform to policy-schemas/bundle.schema.json', () => {
    let checked = 0;
    for (const name of cases) {
      const out = JSON.parse(compileCase(name));
      if (!out.ok) continue;
      const r = validate('bundle', out.bundle);
      expect(r.ok ? [] : r.errors, name).toEqual([]);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(3);
  });

  for (const name of cases) {
    it(`compiles ${name} exactly as recorded`, () => {
      const actual = compileCase(name);
      const goldenPath = join(dir, `${name}.golden.json`);
      if (process.env.UPDATE_GOLDEN === '1') writeFileSync(goldenPath, actual);
      expect(existsSync(goldenPath), `${name}.golden.json is missing; run with UPDATE_GOLDEN=1`).toBe(true);
      expect(actual).toBe(readFileSync(goldenPath, 'utf8'));
    });
  }
});
