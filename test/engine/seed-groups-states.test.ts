// The groups-and-states workflow of the tool-group reference design (§5), with the expected sets
// computed from its filtering rules (§4.2), not copied from its prose.
import { describe, expect, it } from 'vitest';
import type { Tool } from '../../policy-schemas/types.gen.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { nextState } from '../../runtime/next-state.ts';
import { build } from './build.ts';
import { demoData, demoSnapshot } from './demo-snapshot.ts';

const WORKFLOW_TOOLS = ['core__knowledge-query', 'core__graph-update', 'core__text-completion', 'core__complex-analysis', 'core__reset-workflow'];

/** §4.2, literally: group intersection (or `*`), then `current_state in tool_states or "*" in tool_states`. */
function availableByTheRules(tools: Tool[], requestGroups: string[] | undefined, requestState: string | undefined): string[] {
  const requested = requestGroups ?? ['default'];
  const state = requestState ?? 'undefined';
  return tools
    .filter((t) => {
      const toolGroups = t.groups ?? ['default'];
      const toolStates = t.availableInStates ?? ['*'];
      const groupOk = toolGroups.some((g) => requested.includes(g)) || requested.includes('*');
      const stateOk = toolStates.includes(state) || toolStates.includes('*');
      return groupOk && stateOk;
    })
    .map((t) => t.id)
    .sort();
}

// A subject whose role permits every group and allows every workflow tool, so only groups and
// states decide, as in the reference design.
const snap = demoSnapshot('acme-research');
snap.policy = {
  roles: { workflow: { groups: ['*'], allow: ['core__*'], deny: [], requireApproval: [] } },
  bindings: { 'agent:workflow': ['workflow'] },
};
snap.grants = [{ connectionId: 'kg', subjects: ['workflow'], tools: ['core__graph-update'] }];
const loaded = build(snap);
const workflowTools = demoData().tools.filter((t) => WORKFLOW_TOOLS.includes(t.id));

const steps = [
  { name: 'initial research', groups: ['read-only', 'knowledge'], state: 'undefined', expect: ['core__knowledge-query', 'core__text-completion'] },
  // The prose also lists reset-workflow here, but it is only in group "admin", which is not requested.
  { name: 'analysis phase', groups: ['advanced', 'compute', 'write'], state: 'analysis', expect: ['core__complex-analysis', 'core__graph-update'] },
  { name: 'results phase', groups: ['admin'], state: 'results', expect: ['core__reset-workflow'] },
];

describe('groups-and-states workflow (reference §5)', () => {
  for (const step of steps) {
    it(`R6.3 R6.7 R6.8 shows exactly the rule-computed tools in the ${step.name}`, () => {
      const byRules = availableByTheRules(workflowTools, step.groups, step.state);
      expect(byRules).toEqual(step.expect);
      const r = evaluate(loaded, { subject: 'agent:workflow', groups: step.groups, state: step.state });
      expect(r.tools.map((t) => t.id).filter((id) => WORKFLOW_TOOLS.includes(id))).toEqual(byRules);
    });
  }

  it('R6.3 R6.7 R6.8 agrees with the rules on every combination of requested groups and states', () => {
    const groupNames = ['read-only', 'knowledge', 'basic', 'write', 'admin', 'text', 'advanced', 'compute', 'expensive', 'default', '*'];
    const stateNames = ['undefined', 'research', 'analysis', 'modification', 'results'];
    let checked = 0;
    for (let mask = 0; mask < 1 << groupNames.length; mask += 7) {
      const groups = groupNames.filter((_, i) => mask & (1 << i));
      for (const state of stateNames) {
        const r = evaluate(loaded, { subject: 'agent:workflow', groups, state });
        const seen = r.tools.map((t) => t.id).filter((id) => WORKFLOW_TOOLS.includes(id));
        expect(seen, `${groups.join(',')} @ ${state}`).toEqual(availableByTheRules(workflowTools, groups, state));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('R8.1 R6.8 walks the complete flow: knowledge-query → analysis, complex-analysis → results, reset-workflow → undefined', () => {
    let state: string | undefined;
    const flow = [
      { groups: ['knowledge', 'compute'], call: 'core__knowledge-query', next: 'analysis' },
      { groups: ['knowledge', 'compute'], call: 'core__complex-analysis', next: 'results' },
      { groups: ['admin'], call: 'core__reset-workflow', next: 'undefined' },
    ];
    for (const step of flow) {
      const r = evaluate(loaded, { subject: 'agent:workflow', groups: step.groups, ...(state ? { state } : {}) });
      expect(r.tools.map((t) => t.id)).toContain(step.call);
      state = nextState(loaded, state, step.call);
      expect(state).toBe(step.next);
    }
    // Back at the start, the initial tools are available again.
    const again = evaluate(loaded, { subject: 'agent:workflow', groups: ['read-only', 'knowledge'], state });
    expect(again.tools.map((t) => t.id)).toEqual(['core__knowledge-query', 'core__text-completion']);
  });

  it('R8.1 keeps the state after a tool without a state transition', () => {
    expect(nextState(loaded, 'analysis', 'core__graph-update')).toBe('analysis');
    expect(nextState(loaded, 'analysis', 'core__unknown')).toBe('analysis');
  });

  it('R6.4 refuses groups the subject is not permitted instead of narrowing', () => {
    const demo = build(demoSnapshot('acme-research'));
    const r = evaluate(demo, { subject: 'agent:research-bot', groups: ['read-only', 'admin'] });
    expect(r.rejected).toEqual({ reason: 'group_not_permitted', groups: ['admin'] });
  });
});
