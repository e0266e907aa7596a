// Argument-constraint benchmark (DESIGN / issue "Figures"): what two constraints naming a tool
// add to decide() on a call they allow. The same tenant compiled twice, with and without the
// constraints; the same allowed call decided in a loop. Prints figures; asserts nothing.
import type { TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { createView, decide } from '../../runtime/decide.ts';
import type { ToolCall } from '../../runtime/decide.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';

const tools: Tool[] = [
  {
    id: 'mcp__github__create_issue',
    description: 'Open an issue in a repository.',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['repo', 'title'],
      properties: { repo: { type: 'string', maxLength: 200 }, title: { type: 'string', maxLength: 500 }, body: { type: 'string', maxLength: 65536 } },
    },
    effect: 'external_side_effect',
    redaction: { allow: ['number'] },
  },
];
const role = { groups: ['default'], allow: ['mcp__github__*'] };
const constraints: NonNullable<TenantPolicy['roles']>[string]['constraints'] = [
  {
    tools: ['mcp__github__create_*'],
    otherwise: 'deny',
    arguments: { required: ['repo'], properties: { repo: { type: 'string', pattern: '^acme/' } } },
    reason: 'agents write only to acme repositories',
  },
  {
    tools: ['mcp__github__*'],
    otherwise: 'require_approval',
    arguments: { properties: { title: { maxLength: 120 } } },
    reason: 'long titles need a person',
  },
];

function loaded(withConstraints: boolean) {
  const policy: TenantPolicy = { roles: { writer: withConstraints ? { ...role, constraints } : role }, bindings: { 'agent:writer': ['writer'] } };
  const r = compileBundle(
    { tenant: { id: 'bench', name: 'Bench' }, policy, tools, groups: [], states: [], grants: [] },
    { version: 1, previousRevision: null, issuedAt: new Date().toISOString() },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors.slice(0, 3)));
  return loadBundle(JSON.parse(r.text));
}

const call: ToolCall = {
  toolCallId: 'bench-1',
  name: 'mcp__github__create_issue',
  arguments: JSON.stringify({ repo: 'acme/api', title: 'Flaky test in CI', body: 'The integration suite fails one run in ten.' }),
};

/** ns per decide() of `n` calls on a view. */
function round(view: ReturnType<typeof createView>, n: number): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) decide(view, call);
  return Number(process.hrtime.bigint() - t0) / n;
}

const views = [false, true].map((withConstraints) => {
  const view = createView(loaded(withConstraints), { subject: 'agent:writer' });
  const first = decide(view, call);
  if (first.decision !== 'allow') throw new Error(`the bench call must be allowed, got ${JSON.stringify(first)}`);
  for (let i = 0; i < 200_000; i++) decide(view, call);
  return view;
});
// Short rounds, alternating, so that a busy stretch of a shared machine weighs on both alike; the
// figures are medians over the rounds, the difference the median of each round's difference.
const without: number[] = [];
const withTwo: number[] = [];
const added: number[] = [];
for (let r = 0; r < 41; r++) {
  const a = round(views[0], 50_000);
  const b = round(views[1], 50_000);
  without.push(a);
  withTwo.push(b);
  added.push(b - a);
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
console.log(`decide, allowed call, no constraint:    ${median(without).toFixed(0)} ns`);
console.log(`decide, allowed call, two constraints:  ${median(withTwo).toFixed(0)} ns`);
console.log(`two constraints add:                    ${median(added).toFixed(0)} ns (target ≤ 1000 ns)`);
