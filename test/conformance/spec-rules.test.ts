// Every test of the evaluator and of the call-time functions names the rule of docs/spec.md it
// checks, and every rule it names (and every rule a vector or misreading names) exists there.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { demoSnapshot } from '../engine/demo-snapshot.ts';
import { MISREADINGS } from './misreadings.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const spec = readFileSync(join(root, 'docs/spec.md'), 'utf8');
const defined = new Set([...spec.matchAll(/\*\*(R\d+\.\d+)\b/g), ...spec.matchAll(/^\| (R\d+\.\d+) \|/gm)].map((m) => m[1]));
const EVALUATOR_TESTS = [
  'test/engine/semantics.test.ts',
  'test/engine/seed-tool-runner.test.ts',
  'test/engine/seed-groups-states.test.ts',
  'test/engine/reference.test.ts',
  'test/engine/differential.test.ts',
  'test/engine/seed-host-session.test.ts',
  'runtime/plan-batch.test.ts',
  'runtime/constraints.test.ts',
  'test/api/profiles.test.ts',
];

describe('docs/spec.md rules', () => {
  it('numbers every rule of evaluate (R6.1–R6.16) and decide (R7.1–R7.11)', () => {
    for (let n = 1; n <= 16; n++) expect(defined).toContain(`R6.${n}`);
    for (let n = 1; n <= 11; n++) expect(defined).toContain(`R7.${n}`);
  });

  it('is cited by name in every test of the evaluator, and only with rules it defines', () => {
    for (const file of EVALUATOR_TESTS) {
      const text = readFileSync(join(root, file), 'utf8');
      const names = [...text.matchAll(/\bit\((['`])(.*?)\1/g)].map((m) => m[2]);
      expect(names.length, file).toBeGreaterThan(0);
      for (const name of names) {
        const cited =
          name
            .match(/^(R\d+\.\d+ )+/)?.[0]
            .trim()
            .split(' ') ?? [];
        expect(cited.length, `${file}: "${name}" names no rule`).toBeGreaterThan(0);
        for (const rule of cited) expect(defined, `${file}: "${name}"`).toContain(rule);
      }
    }
  });

  it('gives every refusal code a runtime reports (runtime-status verifyCode) a place in a verification table', () => {
    const schema = JSON.parse(readFileSync(join(root, 'policy-schemas/runtime-status.schema.json'), 'utf8')) as {
      $defs: { verifyCode: { enum: string[] } };
    };
    const tabled = new Set([...spec.matchAll(/^\| R[\d.]+ +\|.*\| `([a-z_]+)` +\|$/gm)].map((m) => m[1]));
    for (const code of schema.$defs.verifyCode.enum) expect(tabled, code).toContain(code);
  });

  it('defines every rule that bundle vectors and misreadings name', () => {
    const r = compileBundle(demoSnapshot('acme-research'), { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00.000Z' });
    if (!r.ok) throw new Error('compile failed');
    const named = new Set([...r.bundle.conformance.flatMap((v) => v.rules), ...MISREADINGS.map((m) => m.rule)]);
    for (const rule of named) expect(defined).toContain(rule);
  });
});
