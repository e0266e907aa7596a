// Publish review benchmark: what asking for a review and approving it cost on a tenant of 1,000
// tools and 50 bound agents, through the API in process. Asking compiles the draft, diffs it
// against the latest version (every subject and tool), runs the tests and replays the logged
// traffic; approving compiles again (to see the draft is unchanged) and signs. Prints figures;
// asserts nothing.
import { startTestApp } from '../support/harness.ts';

const TOOLS = 1000;
const AGENTS = 50;
const ROUNDS = 5;

const t = await startTestApp({ seed: false });
const must = async (what: string, p: Promise<{ status: number; text: string; json: any; headers: Headers }>, status: number) => {
  const r = await p;
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
  return r;
};

await must('tenant', t.request('POST', '/v1/tenants', { body: { id: 'bench', name: 'Bench' } }), 201);
for (let g = 0; g < 10; g++) await must('group', t.request('POST', '/v1/groups', { body: { name: `g${g}`, description: '', includes: [] } }), 201);
for (let i = 0; i < TOOLS; i++) {
  await must(
    'tool',
    t.request('POST', '/v1/tools', {
      body: {
        id: `core__tool_${i}`,
        description: `Tool ${i}`,
        effect: (['read_only', 'state_change', 'external_side_effect'] as const)[i % 3],
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        redaction: { allow: ['ok'] },
        groups: [`g${i % 10}`],
      },
    }),
    201,
  );
}
const roles: Record<string, unknown> = {};
const bindings: Record<string, string[]> = {};
for (let r = 0; r < AGENTS; r++) {
  roles[`role${r}`] = { groups: [`g${r % 10}`, `g${(r + 1) % 10}`], allow: [`core__tool_${r % 10}*`], deny: [], requireApproval: ['state_change'] };
  bindings[`agent:${r}`] = [`role${r}`];
}
const editor = await t.tokenFor('editor', ['bench']);
const reviewer = await t.tokenFor('editor', ['bench']);
const putPolicy = async (change: (p: any) => void) => {
  const cur = await t.request('GET', '/v1/tenants/bench/policy');
  const policy = { ...cur.json };
  change(policy);
  await must('policy', t.request('PUT', '/v1/tenants/bench/policy', { body: policy, headers: { 'if-match': cur.headers.get('etag')! } }), 200);
};
await putPolicy((p) => {
  p.roles = roles;
  p.bindings = bindings;
});
await must('baseline', t.request('POST', '/v1/tenants/bench/bundles', { body: { reason: 'baseline' } }), 201);
await putPolicy((p) => {
  p.review = { publish: 'required', approvals: 1 };
});

const ask: number[] = [];
const approve: number[] = [];
let bytes = 0;
const changed: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  // Each round denies half the roles another part of the tools they are allowed: hundreds of decisions change.
  await putPolicy((p) => {
    for (let r = 0; r < AGENTS; r += 2) p.roles[`role${r}`].deny = [`core__tool_${r % 10}${round}*`];
  });
  let t0 = performance.now();
  const asked = await must('ask', t.request('POST', '/v1/tenants/bench/bundles', { body: { reason: `round ${round}` }, token: editor }), 202);
  ask.push(performance.now() - t0);
  const one = await must('read', t.request('GET', `/v1/tenants/bench/publish-requests/${asked.json.id}`), 200);
  bytes = Math.max(bytes, one.text.length);
  changed.push(one.json.diff.decisions.length);
  t0 = performance.now();
  await must('approve', t.request('POST', `/v1/tenants/bench/publish-requests/${asked.json.id}/approve`, { body: {}, token: reviewer }), 200);
  approve.push(performance.now() - t0);
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const p50 = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!.toFixed(0);
const max = (xs: number[]) => sorted(xs)[xs.length - 1]!.toFixed(0);
console.log(`publish review: ${TOOLS} tools, ${AGENTS} agents, ${ROUNDS} rounds`);
console.log(`  ask for review (202: compile, diff, tests, impact): p50 ${p50(ask)} ms, max ${max(ask)} ms`);
console.log(`  approve (compile check, sign, publish):           p50 ${p50(approve)} ms, max ${max(approve)} ms`);
console.log(`  decisions changed per round:                      ${changed.join(', ')}`);
console.log(`  largest request with its review material:         ${(bytes / 1024).toFixed(0)} KiB`);
await t.close();
