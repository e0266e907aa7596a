// `npm run bench`: runs every test/bench/*.bench.ts in its own process, one after the other,
// so each benchmark gets the machine to itself. Benchmarks print figures; none asserts timing.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
if (files.length === 0) {
  console.error(`no benchmark matches ${only.map((o) => JSON.stringify(o)).join(', ')}`);
  process.exit(2);
}
// A benchmark that hangs is stopped and named rather than holding the run forever.
const timeoutMs = Number(process.env.BENCH_TIMEOUT_SECONDS ?? 900) * 1000;
const failures: string[] = [];
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(here, f)], { stdio: 'inherit', timeout: timeoutMs, killSignal: 'SIGKILL' });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') failures.push(`${f}: stopped after ${timeoutMs / 1000} s`);
  else if (r.error) failures.push(`${f}: could not run (${r.error.message})`);
  else if (r.signal) failures.push(`${f}: killed by ${r.signal}`);
  else if (r.status !== 0) failures.push(`${f}: exited with ${r.status}`);
}
console.log(`\n${files.length - failures.length} of ${files.length} benchmarks ran to the end`);
for (const f of failures) console.error(`did not finish: ${f}`);
process.exit(failures.length ? 1 : 0);
