// Bundle format benchmark: the 2,000-tool tenant with shared input schemas and with 2,000 distinct
// ones, as toolgate.bundle/v1 and /v2. Prints bytes (raw, gzip, brotli), verify + load time and heap
// in a fresh process against JSON.parse of the same bytes (each the median of several cold
// processes), the first and second decide on a tool, where v2's verify CPU time goes step by step,
// and the conformance vectors' share of the bytes. Targets (issue 30): verify + load ≤ 10× JSON.parse
// and heap ≤ 3×, cold. Asserts nothing.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { jwksOf, makeKey, signBytes } from '../distribution/signed-bundles.ts';
import { benchSnapshot, benchTools } from '../engine/bench-tenant.ts';
import { toV1 } from '../engine/bundle-v1.ts';

const here = dirname(fileURLToPath(import.meta.url));
// BENCH_ROUNDS: cold processes per figure (the median is printed).
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ISSUED_AT = '2026-01-01T00:00:00.000Z';

type Measure = { ms: number; cpuMs: number; heap: number; firstDecideMs?: number[]; secondDecideMs?: number[] };

function coldRun(mode: 'parse' | 'verify' | 'steps', files: { bundle: string; signature: string; jwks: string }, tenant: string): Measure {
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', join(here, 'bundle-load-process.ts'), mode, files.bundle, files.signature, files.jwks, tenant, ISSUED_AT],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`${mode} process failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as Measure;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
const row = (cells: string[]) => console.log(cells.map((c, i) => (i === 0 ? c.padEnd(22) : c.padStart(11))).join(' '));

const dir = mkdtempSync(join(tmpdir(), 'toolgate-bundle-format-'));
try {
  const key = await makeKey('bench');
  const jwks = join(dir, 'jwks.json');
  writeFileSync(jwks, JSON.stringify(jwksOf(key)));
  console.log(`bundle format benchmark: 2,000 tools, v1 against v2; cold figures are the median of ${ROUNDS} fresh processes\n`);
  row([
    'tenant / format',
    'bytes',
    'gzip',
    'brotli',
    'JSON.parse',
    'verify+load',
    'time ×',
    'parse CPU',
    'verify CPU',
    'CPU ×',
    'parse heap',
    'verify heap',
    'heap ×',
  ]);
  const firstDecides: string[] = [];
  for (const distinct of [false, true]) {
    const kind = distinct ? 'distinct schemas' : 'shared schemas';
    const snapshot = benchSnapshot(0, benchTools({ distinct }));
    const r = compileBundle(snapshot, { version: 1, previousRevision: null, issuedAt: ISSUED_AT });
    if (!r.ok) throw new Error(JSON.stringify(r.errors.slice(0, 3)));
    const v2 = JSON.parse(r.text) as Bundle;
    const formats: [string, string][] = [
      ['v1', canonicalJson(toV1(v2))],
      ['v2', r.text],
    ];
    for (const [format, text] of formats) {
      const files = { bundle: join(dir, `${format}-${distinct}.json`), signature: join(dir, `${format}-${distinct}.sig`), jwks };
      writeFileSync(files.bundle, text);
      writeFileSync(files.signature, await signBytes(text, key));
      const bytes = Buffer.from(text);
      const parse: Measure[] = [];
      const verify: Measure[] = [];
      for (let k = 0; k < ROUNDS; k++) {
        parse.push(coldRun('parse', files, snapshot.tenant.id));
        verify.push(coldRun('verify', files, snapshot.tenant.id));
      }
      const [pMs, vMs] = [median(parse.map((m) => m.ms)), median(verify.map((m) => m.ms))];
      const [pCpu, vCpu] = [median(parse.map((m) => m.cpuMs)), median(verify.map((m) => m.cpuMs))];
      const [pHeap, vHeap] = [median(parse.map((m) => m.heap)), median(verify.map((m) => m.heap))];
      row([
        `${kind} ${format}`,
        kib(bytes.length),
        kib(gzipSync(bytes).length),
        kib(brotliCompressSync(bytes).length),
        `${pMs.toFixed(1)} ms`,
        `${vMs.toFixed(1)} ms`,
        `${(vMs / pMs).toFixed(1)}×`,
        `${pCpu.toFixed(1)} ms`,
        `${vCpu.toFixed(1)} ms`,
        `${(vCpu / pCpu).toFixed(1)}×`,
        mib(pHeap),
        mib(vHeap),
        `${(vHeap / pHeap).toFixed(1)}×`,
      ]);
      const first = verify.flatMap((m) => m.firstDecideMs ?? []);
      const second = verify.flatMap((m) => m.secondDecideMs ?? []);
      firstDecides.push(
        `${kind} ${format}: first decide on a tool ${median(first).toFixed(2)} ms (compiles its input schema), the second ${median(second).toFixed(3)} ms`,
      );
      if (format === 'v2') {
        // Where a cold verify's CPU time goes, step by step (each step timed alone, in verifyBundle's order).
        const steps: Record<string, number>[] = [];
        for (let k = 0; k < ROUNDS; k++) steps.push(coldRun('steps', files, snapshot.tenant.id) as unknown as Record<string, number>);
        const byStep = Object.keys(steps[0]).map((name) => `${name} ${median(steps.map((m) => m[name])).toFixed(1)}`);
        firstDecides.push(`${kind} v2: verify CPU by step, ms (median): ${byStep.join(', ')}`);
        const vectorBytes = Buffer.byteLength(canonicalJson(v2.conformance));
        firstDecides.push(
          `${kind} v2: ${v2.conformance.length} conformance vectors, ${kib(vectorBytes)} = ${((100 * vectorBytes) / bytes.length).toFixed(1)}% of the bundle (target ≤ 10%)`,
        );
      }
    }
  }
  console.log('');
  for (const line of firstDecides) console.log(line);
  console.log('\ntargets: verify+load ≤ 10× JSON.parse of the same bytes, heap ≤ 3×, cold; bytes are exact, times vary by machine (on a shared');
  console.log('machine the CPU-time ratio, which counts only the measuring process, is the steadier one)');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
