import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { validate } from '../../../policy-schemas/index.ts';
import type { Bundle, PolicyTest, PolicyTests } from '../../../policy-schemas/types.gen.ts';
import { compileBundle } from '../../compiler/compile-bundle.ts';
import { readDir } from '../../config-as-code/read-dir.ts';
import { snapshotFromDir } from '../../config-as-code/snapshot-from-dir.ts';
import { loadBundle } from '../../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../../runtime/load-bundle.ts';
import { runPolicyTests } from '../../../runtime/policy-tests.ts';
import { describeSafeParse, parseSafeJson } from '../../http/safe-json.ts';
import { BUNDLE_MAX_DEPTH } from '../read-json-file.ts';
import { type Output, consoleOutput } from '../output.ts';

const USAGE = 'usage: toolgate test --bundle FILE --tests FILE | toolgate test --dir DIR --tenant T';

/**
 * `toolgate test --bundle F --tests F` (or `--dir D --tenant T`, see testDir): runs a tenant's policy tests (the `{ "tests": [...] }`
 * document of GET …/tests, or `tenants/<t>/tests.json` of an export) against a compiled bundle,
 * without a server. Prints each failure; exit 0 when all pass, 1 on any failure, 2 when a file
 * cannot be used (unreadable, not JSON, not a bundle, tests not valid).
 */
export async function run(args: string[], out: Output = consoleOutput): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { bundle: { type: 'string' }, tests: { type: 'string' }, dir: { type: 'string' }, tenant: { type: 'string' } } }));
  } catch (err) {
    out.error(`toolgate test: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.dir && values.tenant && !values.bundle && !values.tests) return testDir(values.dir, values.tenant, out);
  if (!values.bundle || !values.tests) {
    out.error(USAGE);
    return 2;
  }
  const bundle = readJsonFile(values.bundle, out);
  const tests = readJsonFile(values.tests, out);
  if (bundle === undefined || tests === undefined) return 2;
  const check = validate<PolicyTests>('policy-tests', tests);
  if (!check.ok) {
    out.error(`toolgate test: ${values.tests} is not a valid tests file:`);
    for (const e of check.errors) out.error(`  ${e.pointer || '/'}: ${e.message}`);
    return 2;
  }
  const bundleCheck = validate<Bundle>('bundle', bundle);
  let loaded: LoadedBundle;
  try {
    if (!bundleCheck.ok)
      throw new Error(
        bundleCheck.errors
          .slice(0, 3)
          .map((e) => `${e.pointer || '/'} ${e.message}`)
          .join('; '),
      );
    loaded = loadBundle(bundleCheck.value);
  } catch (err) {
    out.error(`toolgate test: ${values.bundle} is not a usable bundle: ${(err as Error).message}`);
    return 2;
  }
  return report(loaded, check.value.tests, out);
}

/**
 * `--dir D --tenant T`: compiles the tenant from a configuration directory (an export, as kept in
 * git) in memory, exactly as the server would compile that draft, and runs its tests.json.
 */
function testDir(dir: string, tenant: string, out: Output): number {
  const read = readDir(dir);
  if (!read.ok) {
    out.error(`toolgate test: ${dir} has ${read.problems.length} problem${read.problems.length === 1 ? '' : 's'}:`);
    for (const p of read.problems) out.error(`  ${p.path}${p.pointer ? ` ${p.pointer}` : ''}: ${p.message}`);
    return 2;
  }
  const found = snapshotFromDir(read.entities, tenant);
  if (!found) {
    out.error(`toolgate test: ${dir} has no tenants/${tenant}/tenant.json`);
    return 2;
  }
  const r = compileBundle(found.snapshot, { version: 1, previousRevision: null, issuedAt: new Date().toISOString() });
  if (!r.ok) {
    out.error(`toolgate test: the configuration of ${tenant} does not compile (${r.errors.length} error${r.errors.length === 1 ? '' : 's'}):`);
    for (const e of r.errors) out.error(`  ${e.pointer}: ${e.message} [${e.code}]`);
    return 2;
  }
  return report(loadBundle(JSON.parse(r.text) as Bundle), found.tests, out);
}

/** Prints each failure (and each passing test), then a summary; 1 when any test fails. */
function report(loaded: LoadedBundle, tests: PolicyTest[], out: Output): number {
  const outcomes = runPolicyTests(loaded, tests);
  for (const o of outcomes) {
    if (o.passed) out.log(`ok    ${o.name}`);
    else for (const f of o.failures) out.log(`FAIL  ${o.name}  ${f.pointer}: expected ${f.expected}, saw ${f.seen}`);
  }
  const failed = outcomes.filter((o) => !o.passed).length;
  const summary = `${outcomes.length - failed} passed, ${failed} failed (tenant ${loaded.tenant}, revision ${loaded.revision})`;
  if (failed) out.error(summary);
  else out.log(summary);
  return failed ? 1 : 0;
}

function readJsonFile(file: string, out: Output): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    out.error(`toolgate test: cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
    return undefined;
  }
  const parsed = parseSafeJson(text, BUNDLE_MAX_DEPTH);
  if (!parsed.ok) {
    out.error(`toolgate test: ${file} is ${parsed.kind === 'syntax' ? `not JSON: ${parsed.message}` : `refused: ${describeSafeParse(parsed)}`}`);
    return undefined;
  }
  return parsed.value;
}
