// `npm run bench`: runs every test/bench/*.bench.ts in its own process, one after the other,
// so each benchmark gets the machine to itself. Benchmarks print figures; none asserts timing.
// Exits 0 when every benchmark ran to the end; otherwise names each one that did not, and why.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
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
let finished = 0;
let running: { file: string; child: ChildProcess } | undefined;

// Each benchmark leads its own process group, so what it started (servers, nginx, SDK hosts) is
// stopped with it, and a stopped run still says which benchmark it stopped in.
const killGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (running) {
      killGroup(running.child, 'SIGKILL');
      failures.push(`${running.file}: stopped by ${signal}`);
    }
    const stoppedAt = running ? files.indexOf(running.file) + 1 : finished + failures.length;
    report(files.slice(stoppedAt));
    process.exit(130);
  });
}

for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const failure = await runOne(f);
  if (failure) failures.push(`${f}: ${failure}`);
  else finished++;
}
report([]);
process.exit(failures.length ? 1 : 0);

/** Runs one benchmark; answers why it did not run to the end, or null when it did. */
function runOne(file: string): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, file)], { stdio: 'inherit', detached: true });
    running = { file, child };
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child, 'SIGKILL');
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      running = undefined;
      resolve(`could not run (${err.message})`);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      running = undefined;
      // Whatever the benchmark left running goes with it.
      killGroup(child, 'SIGKILL');
      if (timedOut) resolve(`stopped after ${timeoutMs / 1000} s`);
      else if (signal) resolve(`killed by ${signal}`);
      else if (code !== 0) resolve(`exited with ${code}`);
      else resolve(null);
    });
  });
}

function report(notRun: string[]): void {
  console.log(`\n${finished} of ${files.length} benchmarks ran to the end`);
  for (const f of failures) console.log(`did not finish: ${f}`);
  for (const f of notRun) console.log(`not run: ${f}`);
}
