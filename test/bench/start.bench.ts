// Start-up benchmark: time from `npm start` (and from plain `node dist/server/main.js serve`) to
// the first 200 on /healthz, on a database that already exists, beside the old way (tsx on the
// sources). Prints figures and the machine's load; asserts nothing.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureServerBuilt, ensureWebBuilt, ROOT } from '../build/ensure-built.ts';
import { freePort } from '../support/free-port.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-start-bench-'));

/** CPU milliseconds (user + system) a process has used so far, from /proc (Linux). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks, 100 per second
  } catch {
    return Number.NaN;
  }
}

type Start = { wallMs: number; cpuMs: number };

/**
 * Milliseconds from spawning `command` to the first 200 on /healthz, and the CPU time the spawned
 * process had used by then (wall time on a shared machine grows with its load; CPU time does not).
 */
async function timeToHealthz(command: string, args: string[]): Promise<Start> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: 'ignore',
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      TOOLGATE_DB: join(dir, 'toolgate.db'),
      TOOLGATE_KEYS_DIR: join(dir, 'keys'),
      TOOLGATE_ADMIN_TOKEN: 'tg_start_bench_admin_0123456789abcdef',
      LOG_LEVEL: 'silent',
    },
  });
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return { wallMs: performance.now() - started, cpuMs: cpuMs(child.pid!) };
      if (child.exitCode !== null) throw new Error(`${command} ${args.join(' ')} exited with ${child.exitCode}`);
      if (performance.now() - started > 60_000) throw new Error(`${command} ${args.join(' ')} did not answer /healthz in 60 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

await ensureServerBuilt();
await ensureWebBuilt(); // else the first `npm start` would build the console
const rows: [string, Start][] = [];
// The first start migrates and seeds the database; every later one finds it ready.
rows.push(['first start, new database (node dist)', await timeToHealthz(process.execPath, ['dist/server/main.js', 'serve'])]);
for (let i = 1; i <= 3; i++) rows.push([`npm start, built tree (#${i})`, await timeToHealthz('npm', ['start', '--silent'])]);
for (let i = 1; i <= 3; i++) rows.push([`node dist/server/main.js serve (#${i})`, await timeToHealthz(process.execPath, ['dist/server/main.js', 'serve'])]);
for (let i = 1; i <= 2; i++)
  rows.push([`before: tsx server/cli/main.ts serve (#${i})`, await timeToHealthz(process.execPath, ['--import', 'tsx', 'server/cli/main.ts', 'serve'])]);
rmSync(dir, { recursive: true, force: true });

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on this machine (figures scale with it)`,
);
for (const [what, r] of rows) {
  // npm's own process is mostly waiting for its children: its CPU time says nothing of the server's.
  const cpu = what.startsWith('npm') ? '' : `, ${r.cpuMs.toFixed(0)} ms CPU in that process`;
  console.log(`${what.padEnd(46)} ${r.wallMs.toFixed(0).padStart(6)} ms to /healthz${cpu}`);
}
