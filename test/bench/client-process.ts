/**
 * What the gateway benchmarks share about their measuring clients: each job runs in a process of
 * its own (so the client's work does not share a core with the process it measures), is handed
 * its job in BENCH_CLIENT_JOB and prints what it measured as its last line of JSON.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs one job in the client script `script` (its own process) and returns what it measured. */
export function runClientJob<T>(script: string, job: { kind: string }): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_CLIENT_JOB: JSON.stringify(job) },
    });
    let out = '';
    child.stdout.on('data', (c) => (out += String(c)));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`the measuring client (${job.kind}) exited with ${code}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()!) as T);
      } catch {
        reject(new Error(`the measuring client (${job.kind}) printed no result`));
      }
    });
  });
}

/** User and system CPU time of a process so far, from /proc (Linux), in ms; NaN elsewhere. */
export function processCpuMs(pid: number | undefined): { user: number; system: number } {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { user: (Number(fields[11]) * 1000) / 100, system: (Number(fields[12]) * 1000) / 100 };
  } catch {
    return { user: Number.NaN, system: Number.NaN };
  }
}
