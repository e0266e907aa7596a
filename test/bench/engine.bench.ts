// Engine benchmark: 2,000 tools, 100 tenants. Prints figures and ratios; asserts nothing.
// decide() beside node-casbin enforce (one enforcer per tenant) on the same queries and a bare
// Set lookup; evaluate() cold and cached; compile + sign for one tenant and for all; bundle bytes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bundle, ConnectionGrant, Group, State, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { conformanceFailures, runtimeSubject } from '../../runtime/conformance.ts';
import { createView, decide } from '../../runtime/decide.ts';
import type { ToolCall } from '../../runtime/decide.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';
import { createTenantEnforcer } from '../../server/policy-engine/enforcer.ts';
import { KeyStore } from '../../server/signing/key-store.ts';
import { signBundle } from '../../server/signing/sign.ts';

const TOOLS = 2000;
const TENANTS = 100;
const NAMESPACES = ['core', 'mcp__github', 'mcp__jira', 'mcp__fs', 'mcp__slack', 'mcp__db', 'mcp__search', 'host'];
const VERBS = ['get', 'list', 'create', 'update', 'delete', 'search', 'read', 'write'];
const GROUPS = Array.from({ length: 20 }, (_, i) => `g${i}`);
const STATES = ['research', 'analysis', 'modification', 'results'];

let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const pick = <T,>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];

const tools: Tool[] = Array.from({ length: TOOLS }, (_, i) => {
  const ns = NAMESPACES[i % NAMESPACES.length];
  const id = `${ns}__${VERBS[(i >> 3) % VERBS.length]}_${String(i).padStart(4, '0')}`;
  return {
    id,
    description: `Tool number ${i}: does ${VERBS[(i >> 3) % VERBS.length]} things in ${ns}.`,
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: [`arg${i % 7}`],
      properties: { [`arg${i % 7}`]: { type: 'string', maxLength: 100 + (i % 13) }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
    },
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
  const grants: ConnectionGrant[] = Array.from({ length: 5 }, (_, g) => ({ connectionId: `conn-${t}-${g}`, subjects: [`role${g}`], tools: [`${pick(NAMESPACES)}__*`] }));
  return { tenant: { id: `tenant-${t}`, name: `Tenant ${t}` }, policy: { roles, bindings, profiles: { openai: { enable: [], disable: [tools[1].id] } } }, tools, groups, states, grants };
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
  row('compile + sign, one tenant (first, cold)', `${first.ms.toFixed(1)} ms`, 'target < 200 ms');
  row('compile + sign, one tenant (median of 5)', `${oneRuns.sort((a, b) => a - b)[2].toFixed(1)} ms`, 'target < 200 ms');
  row(`compile + sign, all ${TENANTS} tenants`, `${(all.ms / 1000).toFixed(2)} s`, `${(all.ms / TENANTS).toFixed(1)} ms per tenant`);
  row('bundle.json bytes, one tenant', `${(bytes / 1024).toFixed(0)} KiB`, `${bytes} bytes; mean ${(totalBytes / TENANTS / 1024).toFixed(0)} KiB`);
  // Conformance vectors: what they add to the bundle (target: at most 10%) and what checking them costs a runtime.
  const vectors = first.value.r.ok ? first.value.r.bundle.conformance : [];
  const vectorBytes = Buffer.byteLength(canonicalJson(vectors));
  const decideVectors = vectors.filter((v) => 'call' in v).length;
  row('conformance vectors, one tenant', `${vectors.length}`, `${vectors.length - decideVectors} evaluate, ${decideVectors} decide`);
  row('conformance vector bytes, one tenant', `${(vectorBytes / 1024).toFixed(1)} KiB`, `${vectorBytes} bytes = ${((100 * vectorBytes) / bytes).toFixed(1)}% of the bundle; target <= 10%`);
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
  row('loadBundle from parsed bytes (median of 5)', `${loads.sort((a, b) => a - b)[2].toFixed(1)} ms`, 'input schemas compiled once per process');

  // decide() vs Casbin vs a Set, on the same (subject, tool) queries.
  const loaded = bundles[0];
  const enforcer = await createTenantEnforcer(loaded.tenant, loaded.revision, loaded.bundle.casbin);
  const subjects = Object.keys(loaded.bundle.policy.bindings);
  const ids = loaded.bundle.index.tools;
  const Q = 4096;
  const queries = Array.from({ length: Q }, () => ({ subject: pick(subjects), tool: pick(ids) }));
  const views = new Map(subjects.map((s) => [s, createView(loaded, { subject: s, groups: ['*'], facts: { hostSession: 'ready' }, at: '2026-01-01T00:00:00Z' })]));
  const calls: ToolCall[] = queries.map((q, i) => {
    const tool = loaded.byId.get(q.tool)!;
    const required = (tool.def?.inputSchema as { required?: string[] } | undefined)?.required?.[0] ?? 'arg0';
    return { toolCallId: `call-${i}`, name: q.tool, arguments: JSON.stringify({ [required]: 'x' }) };
  });
  const parsedCalls: ToolCall[] = calls.map((c) => ({ ...c, arguments: JSON.parse(c.arguments as string) }));
  const set = new Set(ids.map((id) => `${subjects[0]}\u0000${id}`));
  const setKeys = queries.map((q) => `${subjects[0]}\u0000${q.tool}`);

  const queryViews = queries.map((q) => views.get(q.subject)!);
  const decideNs = nsPerOp(100_000, (i) => decide(queryViews[i & (Q - 1)], calls[i & (Q - 1)]).decision === 'allow');
  const decideParsedNs = nsPerOp(100_000, (i) => decide(queryViews[i & (Q - 1)], parsedCalls[i & (Q - 1)]).decision === 'allow');
  const casbinNs = nsPerOp(1_000, (i) => enforcer.allows(queries[i & (Q - 1)].subject, queries[i & (Q - 1)].tool));
  const setNs = nsPerOp(400_000, (i) => set.has(setKeys[i & (Q - 1)]));
  // For scale only: every tenant's rows in one enforcer (what the server must not do on a hot path).
  const shared = await createTenantEnforcer(loaded.tenant, 'all', { ...loaded.bundle.casbin, policy: bundles.flatMap((b) => b.bundle.casbin.policy) });
  const sharedNs = nsPerOp(2, (i) => shared.allows(queries[i & (Q - 1)].subject, queries[i & (Q - 1)].tool));
  const sharedRows = bundles.reduce((n, b) => n + b.bundle.casbin.policy.length, 0);
  let agree = 0;
  for (const q of queries) {
    const v = views.get(q.subject)!;
    const t = loaded.byId.get(q.tool)!;
    const sdkPolicy = v.subject.policy[t.pos] === 0;
    if (sdkPolicy === enforcer.allows(q.subject, q.tool)) agree++;
  }
  console.log('');
  row('decide() (JSON text arguments, schema check)', fmt(decideNs), `per call`);
  row('decide() (parsed arguments, schema check)', fmt(decideParsedNs), `per call`);
  row('node-casbin enforceSync, per-tenant enforcer', fmt(casbinNs), `${loaded.bundle.casbin.policy.length} policy rows`);
  row(`node-casbin, one enforcer for all ${TENANTS} tenants`, fmt(sharedNs), `${sharedRows} policy rows (not used by the server)`);
  row('bare Set lookup', fmt(setNs));
  row('casbin / decide()', `${(casbinNs / decideNs).toFixed(0)}×`, 'target ≥ 100×');
  row('decide() / Set lookup', `${(decideNs / setNs).toFixed(1)}×`, 'target ≤ 3× (parsed arguments: ' + `${(decideParsedNs / setNs).toFixed(1)}×)`);
  row('SDK policy verdict = Casbin on these queries', `${agree}/${Q}`);

  // evaluate(): cold (fresh memo: subject, groups, state and result caches empty), a new request on
  // warm memos, and a cached repeat.
  const requests = subjects.map((s, i) => ({ subject: s, groups: [GROUPS[i % GROUPS.length], GROUPS[(i + 3) % GROUPS.length]], state: i % 2 ? 'analysis' : 'undefined', facts: { hostSession: 'ready' }, at: '2026-01-01T00:00:00Z' }));
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
