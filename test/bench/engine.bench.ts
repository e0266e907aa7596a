// Engine benchmark: 2,000 tools, 100 tenants. Prints figures and ratios; asserts nothing.
// decide() by outcome (allowed with argument checks, each kind of denial, view outside and inside
// the loop) beside node-casbin (per tenant, and one enforcer really asked about every tenant) and a
// bare Set lookup; evaluate() cold and cached; compile + sign for one tenant and for all; bytes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bundle, ConnectionGrant, Group, State, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
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

const TOOLS = 2000;
// BENCH_TENANTS shortens a run on a busy machine (the one-enforcer-for-all row then holds fewer tenants).
const TENANTS = Number(process.env.BENCH_TENANTS ?? 100);
const NAMESPACES = ['core', 'mcp__github', 'mcp__jira', 'mcp__fs', 'mcp__slack', 'mcp__db', 'mcp__search', 'host'];
const VERBS = ['get', 'list', 'create', 'update', 'delete', 'search', 'read', 'write'];
const GROUPS = Array.from({ length: 20 }, (_, i) => `g${i}`);
const STATES = ['research', 'analysis', 'modification', 'results'];

let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];

// Shaped as the server stores a tool saved through the API: with its source and the definition
// hash computed on save (the compiler takes the stored hash instead of hashing 2,000 definitions).
const tools: Tool[] = Array.from({ length: TOOLS }, (_, i) => {
  const ns = NAMESPACES[i % NAMESPACES.length];
  const id = `${ns}__${VERBS[(i >> 3) % VERBS.length]}_${String(i).padStart(4, '0')}`;
  const description = `Tool number ${i}: does ${VERBS[(i >> 3) % VERBS.length]} things in ${ns}.`;
  const inputSchema = {
    type: 'object',
    additionalProperties: false,
    required: [`arg${i % 7}`],
    properties: { [`arg${i % 7}`]: { type: 'string', maxLength: 100 + (i % 13) }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
  };
  return {
    id,
    description,
    inputSchema,
    source: { kind: 'core' },
    definitionHash: definitionHash({ name: id, description, inputSchema }),
    effect: pick(['read_only', 'state_change', 'external_side_effect'] as const),
    redaction: { allow: ['result', 'items[].id'] },
    groups: [pick(GROUPS), pick(GROUPS)].filter((g, k, a) => a.indexOf(g) === k),
    ...(i % 5 === 0 ? { availableInStates: ['undefined', pick(STATES)] } : {}),
    ...(i % 9 === 0 ? { requires: [{ fact: 'hostSession', in: ['ready'] }] } : {}),
    ...(i % 17 === 0 ? { requiresConnection: true } : {}),
    parallel: { safe: i % 3 !== 0, ...(i % 4 === 0 ? { resourceKey: `r${i % 10}` } : {}) },
    status: i % 50 === 0 ? 'quarantined' : 'active',
  };
});
const groups: Group[] = GROUPS.map((name, i) => ({ name, includes: i % 5 === 0 && i + 1 < GROUPS.length ? [GROUPS[i + 1]] : [] }));
const states: State[] = STATES.map((name) => ({ name }));

function tenantSnapshot(t: number): Snapshot {
  const roles: NonNullable<TenantPolicy['roles']> = {};
  for (let r = 0; r < 5; r++) {
    roles[`role${r}`] = {
      groups: r === 0 ? ['*'] : GROUPS.filter(() => rand() < 0.4),
      allow: [`${pick(NAMESPACES)}__*`, `${pick(NAMESPACES)}__${pick(VERBS)}_*`, pick(tools).id, `*_${String(Math.floor(rand() * 20)).padStart(2, '0')}*`],
      deny: [`${pick(NAMESPACES)}__delete_*`, pick(tools).id],
      requireApproval: r % 2 ? ['external_side_effect'] : ['state_change', 'external_side_effect'],
    };
  }
  const bindings: Record<string, string[]> = {};
  for (let s = 0; s < 20; s++) bindings[`agent:a${s}`] = [`role${s % 5}`, ...(s % 3 === 0 ? [`role${(s + 1) % 5}`] : [])];
  const grants: ConnectionGrant[] = Array.from({ length: 5 }, (_, g) => ({
    connectionId: `conn-${t}-${g}`,
    subjects: [`role${g}`],
    tools: [`${pick(NAMESPACES)}__*`],
  }));
  return {
    tenant: { id: `tenant-${t}`, name: `Tenant ${t}` },
    policy: { roles, bindings, profiles: { openai: { enable: [], disable: [tools[1].id] } } },
    tools,
    groups,
    states,
    grants,
  };
}

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
  console.log(`engine benchmark: ${TOOLS} tools, ${TENANTS} tenants, 5 roles and 20 subjects per tenant\n`);

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
  const argsFor = (toolId: string) => {
    const tool = loaded.byId.get(toolId)!;
    const required = (tool.def?.inputSchema as { required?: string[] } | undefined)?.required?.[0] ?? 'arg0';
    return JSON.stringify({ [required]: 'x' });
  };
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
