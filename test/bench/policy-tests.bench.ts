// Policy-test benchmark: what the publish gate adds to a publish. A tenant of 2,000 tools; tests
// as "Save as test" writes them (every visible and every hidden tool of the answer), so each test
// checks about 2,000 expectations. Prints figures; asserts nothing.
import type { Group, PolicyTest, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { runPolicyTests } from '../../runtime/policy-tests.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';

const TOOLS = 2000;
const groups: Group[] = [{ name: 'default', includes: [] }, ...Array.from({ length: 20 }, (_, i) => ({ name: `g${i}`, includes: [] }))];
const tools: Tool[] = Array.from({ length: TOOLS }, (_, i) => ({
  id: `core__tool_${i}`,
  description: `Tool ${i}`,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  effect: (['read_only', 'state_change', 'external_side_effect'] as const)[i % 3],
  redaction: { allow: ['ok'] },
  groups: [`g${i % 20}`],
}));
const roles: TenantPolicy['roles'] = {};
const bindings: Record<string, string[]> = {};
for (let r = 0; r < 50; r++) {
  roles[`role${r}`] = {
    groups: Array.from({ length: 5 }, (_, k) => `g${(r + k) % 20}`),
    allow: r === 1 ? ['core__tool_1*'] : [`core__tool_${r}*`, 'core__tool_1*'],
    deny: [`core__tool_${r}9*`],
    requireApproval: ['state_change'],
  };
  bindings[`agent:${r}`] = [`role${r}`];
}
const policy: TenantPolicy = { roles, bindings, profiles: {} };
const compiled = compileBundle(
  { tenant: { id: 'bench', name: 'Bench' }, policy, tools, groups, states: [{ name: 'undefined' }], grants: [] },
  { version: 1, previousRevision: null, issuedAt: new Date().toISOString() },
);
if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors.slice(0, 3)));
const loaded = loadBundle(JSON.parse(compiled.text));

const tests: PolicyTest[] = Array.from({ length: 100 }, (_, i) => {
  const request = { subject: `agent:${i % 50}`, groups: roles[`role${i % 50}`]!.groups!.slice(0, 3) };
  const r = evaluate(loaded, request);
  return { name: `t${i}`, request, expect: { visible: r.tools.map((t) => t.id), hidden: Object.fromEntries(r.filtered.map((f) => [f.id, f.reason])) } };
});
const expectations = tests.reduce((n, t) => n + (t.expect.visible?.length ?? 0) + Object.keys(t.expect.hidden ?? {}).length, 0);

const time = (runs: number, fn: () => void) => {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(runs / 2)]!, max: samples[runs - 1]! };
};
for (let i = 0; i < 5; i++) runPolicyTests(loaded, tests);
const cached = time(50, () => runPolicyTests(loaded, tests));
// A new bundle each time, as after an edit: evaluate() starts cold.
const cold = time(10, () => runPolicyTests(loadBundle(JSON.parse(compiled.text)), tests));
console.log(`${tests.length} tests, ${expectations} expectations, ${TOOLS} tools`);
console.log(`runPolicyTests, evaluations cached: p50 ${cached.p50.toFixed(1)} ms, max ${cached.max.toFixed(1)} ms`);
console.log(`runPolicyTests on a freshly loaded bundle (includes loadBundle): p50 ${cold.p50.toFixed(1)} ms, max ${cold.max.toFixed(1)} ms`);
