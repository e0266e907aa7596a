// The bundle's vectors as the only tests of evaluate and decide: what `npm run mutate` (Stryker)
// runs against each mutant of runtime/evaluate.ts and runtime/decide.ts. The bundles come from
// TOOLGATE_VECTOR_BUNDLES, written by prepare-bundles.ts with the unmutated compiler; without it
// (an ordinary test run) they are compiled here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { conformanceFailures, runtimeSubject } from '../../runtime/conformance.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';

async function bundles(): Promise<Bundle[]> {
  const dir = process.env.TOOLGATE_VECTOR_BUNDLES;
  if (dir)
    return readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Bundle);
  const { vectorBundles } = await import('./prepare-bundles.ts');
  return vectorBundles();
}

describe('evaluate and decide reproduce every bundle vector', async () => {
  for (const bundle of await bundles()) {
    it(`reproduces the ${bundle.conformance.length} vectors of ${bundle.tenant}`, () => {
      expect(conformanceFailures(bundle.conformance, runtimeSubject(loadBundle(bundle)))).toEqual([]);
    });
  }
});
