// Compiles the bundles whose vectors `npm run mutate` uses as the only tests: the demo tenants and
// randomized ones. Run by the unmutated code before Stryker starts (`tsx test/mutation/prepare-bundles.ts DIR`).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';
import { randomTenant } from '../conformance/tenants.ts';
import { demoSnapshot } from '../engine/demo-snapshot.ts';

const RANDOM_TENANTS = 20;

/** The demo tenants' bundles and those of randomized tenants, compiled now. */
export function vectorBundles(): Bundle[] {
  const snapshots: Snapshot[] = [demoSnapshot('acme-research'), demoSnapshot('globex-eng')];
  for (let seed = 1; seed <= RANDOM_TENANTS; seed++) snapshots.push(randomTenant(seed));
  return snapshots.map((s) => {
    const r = compileBundle(s, { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00.000Z' });
    if (!r.ok) throw new Error(`${s.tenant.id} does not compile`);
    return r.bundle;
  });
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const dir = resolve(process.argv[2] ?? 'reports/mutation/bundles');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const b of vectorBundles()) writeFileSync(join(dir, `${b.tenant}.json`), JSON.stringify(b));
  console.log(`wrote ${dir}`);
}
