import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { validate } from '../../../policy-schemas/index.ts';
import type { Bundle, PolicyTests } from '../../../policy-schemas/types.gen.ts';
import { loadBundle } from '../../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../../runtime/load-bundle.ts';
import { runPolicyTests } from '../../../runtime/policy-tests.ts';

const USAGE = 'usage: toolgate test --bundle FILE --tests FILE';

type Output = { log: (line: string) => void; error: (line: string) => void };

/**
 * `toolgate test --bundle F --tests F`: runs a tenant's policy tests (the `{ "tests": [...] }`
 * document of GET …/tests, or `tenants/<t>/tests.json` of an export) against a compiled bundle,
 * without a server. Prints each failure; exit 0 when all pass, 1 on any failure, 2 when a file
 * cannot be used (unreadable, not JSON, not a bundle, tests not valid).
 */
export async function run(args: string[], out: Output = { log: (l) => console.log(l), error: (l) => console.error(l) }): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { bundle: { type: 'string' }, tests: { type: 'string' } } }));
  } catch (err) {
    out.error(`toolgate test: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
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
    if (!bundleCheck.ok) throw new Error(bundleCheck.errors.slice(0, 3).map((e) => `${e.pointer || '/'} ${e.message}`).join('; '));
    loaded = loadBundle(bundleCheck.value);
  } catch (err) {
    out.error(`toolgate test: ${values.bundle} is not a usable bundle: ${(err as Error).message}`);
    return 2;
  }
  const outcomes = runPolicyTests(loaded, check.value.tests);
  for (const o of outcomes) {
    if (o.passed) out.log(`ok    ${o.name}`);
    else for (const f of o.failures) out.log(`FAIL  ${o.name}  ${f.pointer}: expected ${f.expected}, saw ${f.seen}`);
  }
  const failed = outcomes.filter((o) => !o.passed).length;
  const summary = `${outcomes.length - failed} passed, ${failed} failed (${loaded.bundle.tenant} version ${loaded.bundle.version})`;
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
  try {
    return JSON.parse(text);
  } catch (err) {
    out.error(`toolgate test: ${file} is not JSON: ${(err as Error).message}`);
    return undefined;
  }
}
