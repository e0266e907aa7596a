// Start-up benchmark: time from `npm start` (and from plain `node dist/server/main.js serve`) to
// the first 200 on /healthz, on a database that already exists, beside the old way (tsx on the
// sources); then, with 2,000 more tools (which the server warms its compiler on before answering),
// the start again and the first publish of a 2,000-tool tenant (compile + sign + commit) sent the
// moment /healthz answers and a second later, beside a warm one.
// Prints figures and the machine's load; asserts nothing.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureServerBuilt, ensureWebBuilt, ROOT } from '../build/ensure-built.ts';
import { freePort } from '../support/free-port.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-start-bench-'));
const ADMIN_TOKEN = 'tg_start_bench_admin_0123456789abcdef';

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
async function timeToHealthz(command: string, args: string[], whileUp?: (base: string) => Promise<void>): Promise<Start> {
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
      TOOLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
    },
  });
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) {
        const up = { wallMs: performance.now() - started, cpuMs: cpuMs(child.pid!) };
        await whileUp?.(`http://127.0.0.1:${port}`);
        return up;
      }
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

// The first publish after a start: 2,000 more tools (91 distinct input schemas, as in the engine
// benchmark) in the demo inventory, then a server start and POST …/bundles at once, after 1 s, and warm.
const TOOLS = 2000;
{
  const { openToolgate } = await import('../../server/startup.ts');
  const { toolStore } = await import('../../server/store/inventory.ts');
  const { definitionHash: hashDefinition } = await import('../../runtime/definition-hash.ts');
  const pino = (await import('pino')).default;
  const { deps } = await openToolgate(
    {
      host: '127.0.0.1',
      port: 0,
      dbFile: join(dir, 'toolgate.db'),
      keysDir: join(dir, 'keys'),
      webDir: join(dir, 'web'),
      seed: 'demo',
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
    },
    pino({ level: 'silent' }),
  );
  await deps.database.transaction(async (tx) => {
    const now = new Date().toISOString();
    for (let i = 0; i < TOOLS; i++) {
      const id = `core__start-bench-${String(i).padStart(4, '0')}`;
      const arg = `arg${i % 7}`;
      const inputSchema = {
        type: 'object',
        additionalProperties: false,
        required: [arg],
        properties: { [arg]: { type: 'string', maxLength: 100 + (i % 13) }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
      };
      // As a save through the API stores it: with its source and definition hash.
      const description = `start bench tool ${i}`;
      const definitionHash = hashDefinition({ name: id, description, inputSchema });
      await toolStore.insert(
        tx,
        id,
        { id, description, inputSchema, effect: 'read_only', redaction: { allow: ['result'] }, groups: ['default'], source: { kind: 'core' }, definitionHash },
        now,
      );
    }
  });
  await deps.database.close();
}
const publishes: [string, number][] = [];
const publish = async (base: string) => {
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/tenants/acme-research/bundles`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'start bench', refresh: true }),
  });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`publish answered ${res.status}`);
  return performance.now() - t0;
};
// The server warms its compiler before answering when the inventory is this small, so these
// starts (unlike the ones above, on the demo inventory alone) include that warm-up.
rows.push([
  `node dist serve, ${TOOLS} + demo tools`,
  await timeToHealthz(process.execPath, ['dist/server/main.js', 'serve'], async (base) => {
    publishes.push([`first publish, sent as /healthz answers`, await publish(base)]);
    publishes.push(['next publish (warm)', await publish(base)]);
  }),
]);
rows.push([
  `npm start, built tree, ${TOOLS} + demo tools`,
  await timeToHealthz('npm', ['start', '--silent'], async (base) => {
    await new Promise((r) => setTimeout(r, 1000));
    publishes.push([`first publish, sent 1 s after /healthz`, await publish(base)]);
  }),
]);
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
for (const [what, ms] of publishes) console.log(`${what.padEnd(46)} ${ms.toFixed(0).padStart(6)} ms (${TOOLS} + demo tools: compile, sign, commit)`);
