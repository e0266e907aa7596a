// Engine benchmark: 2,000 tools, 100 tenants. Prints figures and ratios; asserts nothing.
// decide() by outcome (allowed with argument checks, each kind of denial, view outside and inside
// the loop) beside node-casbin (per tenant, and one enforcer really asked about every tenant) and a
// bare Set lookup; evaluate() cold and cached; compile + sign for one tenant and for all; bytes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bundle, Tool } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { conformanceFailures, runtimeSubject } from '../../runtime/conformance.ts';
import { createView, decide } from '../../runtime/decide.ts';
import type { ToolCall } from '../../runtime/decide.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';
import { newEnforcer, newModelFromString } from 'casbin';
import { CALL_ACTION } from '../../server/policy-engine/casbin-policy.ts';
import { createTenantEnforcer } from '../../server/policy-engine/enforcer.ts';
import { KeyStore } from '../../server/signing/key-store.ts';
import { signBundle } from '../../server/signing/sign.ts';
import { BENCH_GROUPS, BENCH_TOOLS, benchArguments, benchRandom, benchSnapshot, benchTools } from '../engine/bench-tenant.ts';

// BENCH_TENANTS shortens a run on a busy machine (the one-enforcer-for-all row then holds fewer tenants).
const TENANTS = Number(process.env.BENCH_TENANTS ?? 100);
// BENCH_SCHEMAS=distinct: every tool has an input schema of its own, as in a real imported catalog
// (bundle-format.bench.ts sets both catalogs side by side, v1 against v2).
const DISTINCT = process.env.BENCH_SCHEMAS === 'distinct';
const TOOLS = BENCH_TOOLS;
const GROUPS = BENCH_GROUPS;
const { rand, pick } = benchRandom(42);
const tools: Tool[] = benchTools({ distinct: DISTINCT });
const tenantSnapshot = (t: number): Snapshot => benchSnapshot(t, tools);

function time<T>(fn: () => T): { ms: number; value: T } {
  const start = process.hrtime.bigint();
  const value = fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

async function timeAsync<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

/** ns per call of `fn(i)`: the median of five rounds of `n` calls each, after a warm-up. */
function nsPerOp(n: number, fn: (i: number) => unknown): number {
  let sink = 0;
  for (let i = 0; i < Math.min(n, 20_000); i++) if (fn(i)) sink++;
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) if (fn(r * n + i)) sink++;
    rounds.push(Number(process.hrtime.bigint() - start) / n);
  }
  if (sink < 0) console.log(sink);
  return rounds.sort((a, b) => a - b)[2];
}

const fmt = (ns: number) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);
const row = (label: string, value: string, note = '') => console.log(`${label.padEnd(46)} ${value.padStart(14)}  ${note}`);

const keysDir = mkdtempSync(join(tmpdir(), 'toolgate-bench-keys-'));
try {
  const keyStore = new KeyStore(join(keysDir, 'keys'));
  const key = await keyStore.signer();
  console.log(
    `engine benchmark: ${TOOLS} tools (${DISTINCT ? 'each with its own input schema' : 'sharing a few input schemas'}), ${TENANTS} tenants, 5 roles and 20 subjects per tenant\n`,
  );

  // Compile + sign.
  const snapshots = Array.from({ length: TENANTS }, (_, t) => tenantSnapshot(t));
  const first = await timeAsync(async () => {
    const r = compileBundle(snapshots[0], { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00Z' });
    if (!r.ok) throw new Error(JSON.stringify(r.errors.slice(0, 3)));
    return { r, jws: await signBundle(r.bytes, key) };
  });
  const oneRuns: number[] = [];
  for (let k = 0; k < 5; k++) {
    oneRuns.push(
      (
        await timeAsync(async () => {
          const r = compileBundle(snapshots[0], { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00Z' });
          if (r.ok) await signBundle(r.bytes, key);
        })
      ).ms,
    );
  }
  const compiled: Bundle[] = [];
  let totalBytes = 0;
  const all = await timeAsync(async () => {
    for (const s of snapshots) {
      const r = compileBundle(s, { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00Z' });
      if (!r.ok) throw new Error('compile failed');
      await signBundle(r.bytes, key);
      totalBytes += r.bytes.length;
      compiled.push(r.bundle);
    }
  });
  const bundles: LoadedBundle[] = compiled.map((b) => loadBundle(b));
  const bytes = first.value.r.ok ? first.value.r.bytes.length : 0;
  // The first compile in this process: the schema validators (policy schemas, the JSON Schema
  // meta-schema, the input schemas of the few tools decide vectors call) and the compiler's code
  // are all cold, as in a server's first publish; that publish itself (with its database read,
  // warm-up and commit) is timed by `npm run bench -- start`.
  row('compile + sign, one tenant (first in process)', `${first.ms.toFixed(1)} ms`, 'cold; target < 200 ms');
  row('compile + sign, one tenant (median of 5)', `${oneRuns.sort((a, b) => a - b)[2].toFixed(1)} ms`, 'target < 200 ms');
  row(`compile + sign, all ${TENANTS} tenants`, `${(all.ms / 1000).toFixed(2)} s`, `${(all.ms / TENANTS).toFixed(1)} ms per tenant`);
  row('bundle.json bytes, one tenant', `${(bytes / 1024).toFixed(0)} KiB`, `${bytes} bytes; mean ${(totalBytes / TENANTS / 1024).toFixed(0)} KiB`);
  // Conformance vectors: what they add to the bundle (target: at most 10%) and what checking them costs a runtime.
  const vectors = first.value.r.ok ? first.value.r.bundle.conformance : [];
  const vectorBytes = Buffer.byteLength(canonicalJson(vectors));
  const decideVectors = vectors.filter((v) => 'call' in v).length;
  row('conformance vectors, one tenant', `${vectors.length}`, `${vectors.length - decideVectors} evaluate, ${decideVectors} decide`);
  row(
    'conformance vector bytes, one tenant',
    `${(vectorBytes / 1024).toFixed(1)} KiB`,
    `${vectorBytes} bytes = ${((100 * vectorBytes) / bytes).toFixed(1)}% of the bundle; target <= 10%`,
  );
  const checkLoaded = loadBundle(JSON.parse(first.value.r.ok ? first.value.r.text : '{}'));
  const check = time(() => conformanceFailures(vectors, runtimeSubject(checkLoaded)));
  row('checking the vectors at load (runtime)', `${check.ms.toFixed(1)} ms`, `${check.value.length} failures`);

  // loadBundle: schemas compiled once per distinct schema (the cache is process-wide).
  const text0 = first.value.r.ok ? first.value.r.text : '{}';
  const loads: number[] = [];
  for (let k = 0; k < 5; k++) {
    const parsed = JSON.parse(text0);
    loads.push(time(() => loadBundle(parsed)).ms);
  }
  row('loadBundle from parsed bytes (median of 5)', `${loads.sort((a, b) => a - b)[2].toFixed(1)} ms`, "input schemas compiled on a tool's first decide");

  // decide(), told apart by outcome: a random (subject, tool) mix mostly ends on the "not visible"
  // shortcut before any argument is parsed, so allowed calls (which parse and schema-check their
  // arguments) and each kind of denial are timed on their own, with the view built once outside
  // the timed loop (as a runtime does per turn) and inside it (a view per call).
  const loaded = bundles[0];
  const enforcer = await createTenantEnforcer(loaded.tenant, loaded.revision, loaded.bundle.casbin);
  const subjects = [...loaded.bindings.keys()];
  const ids = loaded.tools.map((t) => t.id);
  const Q = 4096;
  const requestFor = (s: string) => ({ subject: s, groups: ['*'], facts: { hostSession: 'ready' }, at: '2026-01-01T00:00:00Z' });
  const views = new Map(subjects.map((s) => [s, createView(loaded, requestFor(s))]));
  const argsFor = (toolId: string) => JSON.stringify(benchArguments(loaded.byId.get(toolId)?.def?.inputSchema));
  type Query = { subject: string; tool: string; call: ToolCall };
  const mix: Query[] = Array.from({ length: Q }, (_, i) => {
    const subject = pick(subjects);
    const tool = pick(ids);
    return { subject, tool, call: { toolCallId: `call-${i}`, name: tool, arguments: argsFor(tool) } };
  });
  const outcome = (q: Query) => {
    const d = decide(views.get(q.subject)!, q.call);
    return d.decision === 'deny' ? (d.errorCode ?? 'deny') : d.decision;
  };
  const share = new Map<string, number>();
  for (const q of mix) share.set(outcome(q), (share.get(outcome(q)) ?? 0) + 1);
  // Pools of Q queries each with one outcome, drawn from every subject.
  const poolOf = (want: (q: Query) => boolean, make: (subject: string, tool: string, i: number) => ToolCall): Query[] => {
    const found: Query[] = [];
    for (let tries = 0; found.length < Q && tries < Q * 400; tries++) {
      const subject = pick(subjects);
      const tool = pick(ids);
      const q = { subject, tool, call: make(subject, tool, found.length) };
      if (want(q)) found.push(q);
    }
    return found;
  };
  const allowed = poolOf(
    (q) => outcome(q) === 'allow',
    (_s, t, i) => ({ toolCallId: `ok-${i}`, name: t, arguments: argsFor(t) }),
  );
  const allowedParsed = allowed.map((q) => ({ ...q, call: { ...q.call, arguments: JSON.parse(q.call.arguments as string) } }));
  const notVisible = poolOf(
    (q) => ['unavailable', 'policy_denied'].includes(outcome(q)),
    (_s, t, i) => ({ toolCallId: `nv-${i}`, name: t, arguments: argsFor(t) }),
  );
  const badArgs = poolOf(
    (q) => outcome(q) === 'validation',
    (_s, t, i) => ({ toolCallId: `bad-${i}`, name: t, arguments: '{"arg0":{"nested":[1,2,3]},"zzz":true}' }),
  );
  const timeDecide = (pool: Query[], n: number) =>
    pool.length ? nsPerOp(n, (i) => decide(views.get(pool[i % pool.length].subject)!, pool[i % pool.length].call).decision) : Number.NaN;
  const allowNs = timeDecide(allowed, 50_000);
  const allowParsedNs = timeDecide(allowedParsed, 50_000);
  const allowViewInsideNs = allowed.length
    ? nsPerOp(20_000, (i) => decide(createView(loaded, requestFor(allowed[i % allowed.length].subject)), allowed[i % allowed.length].call).decision)
    : Number.NaN;
  const notVisibleNs = timeDecide(notVisible, 100_000);
  const badArgsNs = timeDecide(badArgs, 20_000);
  const mixNs = timeDecide(mix, 100_000);
  const casbinNs = nsPerOp(1_000, (i) => enforcer.allows(mix[i & (Q - 1)].subject, mix[i & (Q - 1)].tool));
  const set = new Set(ids.map((id) => `${subjects[0]}\u0000${id}`));
  const setKeys = mix.map((q) => `${subjects[0]}\u0000${q.tool}`);
  const setNs = nsPerOp(400_000, (i) => set.has(setKeys[i & (Q - 1)]));

  // One Casbin enforcer holding every tenant's rows, asked about every tenant (each query in its
  // own tenant's domain), checked against the per-tenant enforcers on the same queries.
  const sharedEnforcer = await newEnforcer(newModelFromString(loaded.bundle.casbin.model));
  const allRows = bundles.flatMap((b) => b.bundle.casbin.policy);
  await sharedEnforcer.addPolicies(allRows.filter((r) => r[0] === 'p').map((r) => r.slice(1)));
  await sharedEnforcer.addGroupingPolicies(allRows.filter((r) => r[0] === 'g').map((r) => r.slice(1)));
  const sampleTenants = bundles.slice(0, 10);
  const perTenant = await Promise.all(sampleTenants.map((b) => createTenantEnforcer(b.tenant, b.revision, b.bundle.casbin)));
  const crossQueries = Array.from({ length: 256 }, () => {
    const k = Math.floor(rand() * sampleTenants.length);
    const b = sampleTenants[k];
    return { k, tenant: b.tenant, subject: pick([...b.bindings.keys()]), tool: pick(b.tools).id };
  });
  const sharedNs = nsPerOp(20, (i) => {
    const q = crossQueries[i % crossQueries.length];
    return sharedEnforcer.enforceSync(q.subject, q.tenant, q.tool, CALL_ACTION);
  });
  const sharedAgree = crossQueries.filter(
    (q) => sharedEnforcer.enforceSync(q.subject, q.tenant, q.tool, CALL_ACTION) === perTenant[q.k].allows(q.subject, q.tool),
  ).length;
  let agree = 0;
  for (const q of mix) {
    const v = views.get(q.subject)!;
    const t = loaded.byId.get(q.tool)!;
    if ((v.subject.policy[t.pos] === 0) === enforcer.allows(q.subject, q.tool)) agree++;
  }
  const pctOf = (k: string) => `${(((share.get(k) ?? 0) / Q) * 100).toFixed(1)}%`;
  console.log('');
  console.log(
    `a random (subject, tool) mix of ${Q}: allow ${pctOf('allow')}, require_approval ${pctOf('require_approval')}, not visible ${((((share.get('unavailable') ?? 0) + (share.get('policy_denied') ?? 0)) / Q) * 100).toFixed(1)}%, bad arguments ${pctOf('validation')}`,
  );
  row('decide() allowed, JSON text args, view outside', fmt(allowNs), `per call; parse + schema check (${allowed.length} distinct calls)`);
  row('decide() allowed, parsed args, view outside', fmt(allowParsedNs), 'per call; schema check; target ≤ 1 µs');
  row('decide() allowed, view built inside the loop', fmt(allowViewInsideNs), 'createView (evaluate cached) + decide per call');
  row('decide() denied: tool not visible', fmt(notVisibleNs), 'the shortcut before any parsing');
  row('decide() denied: arguments fail the schema', fmt(badArgsNs), `${badArgs.length} calls; errors with JSON pointers`);
  row('decide() on the random mix', fmt(mixNs), 'what the old headline measured');
  row('node-casbin enforceSync, per-tenant enforcer', fmt(casbinNs), `${loaded.bundle.casbin.policy.length} policy rows`);
  row(
    `node-casbin, one enforcer for all ${TENANTS} tenants`,
    fmt(sharedNs),
    `${allRows.length} rows, queries across ${sampleTenants.length} tenants; agrees ${sharedAgree}/${crossQueries.length} (not used by the server)`,
  );
  row('bare Set lookup', fmt(setNs));
  row('casbin / decide() allowed (text args)', `${(casbinNs / allowNs).toFixed(0)}×`, `casbin / decide() on the mix: ${(casbinNs / mixNs).toFixed(0)}×`);
  row('SDK policy verdict = Casbin on the mix', `${agree}/${Q}`);

  // evaluate(): cold (fresh memo: subject, groups, state and result caches empty), a new request on
  // warm memos, and a cached repeat.
  const requests = subjects.map((s, i) => ({
    subject: s,
    groups: [GROUPS[i % GROUPS.length], GROUPS[(i + 3) % GROUPS.length]],
    state: i % 2 ? 'analysis' : 'undefined',
    facts: { hostSession: 'ready' },
    at: '2026-01-01T00:00:00Z',
  }));
  const clearMemo = () => {
    loaded.memo.subjects.clear();
    loaded.memo.groupMasks.clear();
    loaded.memo.stateMasks.clear();
    loaded.memo.results.clear();
  };
  const coldNs = nsPerOp(500, (i) => {
    clearMemo();
    return evaluate(loaded, requests[i % requests.length]).tools.length;
  });
  let tick = 0;
  const newRequestNs = nsPerOp(500, (i) => {
    tick++;
    return evaluate(loaded, { ...requests[i % requests.length], at: new Date(1767225600000 + tick * 1000).toISOString() }).tools.length;
  });
  const cachedNs = nsPerOp(50_000, (i) => evaluate(loaded, requests[i % requests.length]).tools.length);
  console.log('');
  row('evaluate() cold (all memos empty)', fmt(coldNs), 'target < 100 µs');
  row('evaluate() new request, warm memos', fmt(newRequestNs));
  row('evaluate() cached', fmt(cachedNs), 'target < 5 µs');
} finally {
  rmSync(keysDir, { recursive: true, force: true });
}
