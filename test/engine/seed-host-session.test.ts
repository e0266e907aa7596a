// The verification matrix of the runtime tool-gating reference design: host-session gating,
// provider profile switching, deterministic batch plans and byte-identical replay.
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { createView, decide } from '../../runtime/decide.ts';
import type { ToolCall } from '../../runtime/decide.ts';
import { toAnthropicTools, toOpenAITools } from '../../runtime/encoders.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import { nextState } from '../../runtime/next-state.ts';
import { planBatch } from '../../runtime/plan-batch.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { ISSUED_AT } from './build.ts';
import { demoSnapshot } from './demo-snapshot.ts';

const compiled = compileBundle(demoSnapshot('globex-eng'), { version: 1, previousRevision: null, issuedAt: ISSUED_AT });
if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
const loaded = loadBundle(JSON.parse(compiled.text));

const HOST_BOUND = [
  'core__host_exec',
  'core__host_fs_apply_patch',
  'core__host_fs_edit_file',
  'core__host_fs_exists',
  'core__host_fs_glob',
  'core__host_fs_grep',
  'core__host_fs_list_dir',
  'core__host_fs_read_file',
  'core__host_fs_stat',
  'core__host_fs_write_file',
];
const coder = (facts?: Record<string, string>, profile?: string) => ({
  subject: 'agent:coding-bot',
  groups: ['coding'],
  ...(facts ? { facts } : {}),
  ...(profile ? { profile } : {}),
});
const ids = (l: LoadedBundle, req: Parameters<typeof evaluate>[1]) => evaluate(l, req).tools.map((t) => t.id);

describe('host-session gating', () => {
  it('R6.11 offers only host.session.open while no host session is active', () => {
    const r = evaluate(loaded, coder());
    expect(r.tools.map((t) => t.id)).toEqual(['core__host_session_open']);
    for (const id of HOST_BOUND) expect(r.filtered).toContainEqual({ id, reason: 'runtime_gate' });
  });

  it('R6.12 shows the host fs and exec tools once the session is ready, except the profile-scoped edit tools', () => {
    const seen = ids(loaded, coder({ hostSession: 'ready' }));
    const scoped = ['core__host_fs_apply_patch', 'core__host_fs_edit_file'];
    expect(seen).toEqual(['core__host_session_open', ...HOST_BOUND.filter((id) => !scoped.includes(id))].sort());
  });

  for (const status of ['closed', 'expired', 'error']) {
    it(`R6.11 hides every host-bound tool again when the session is ${status}`, () => {
      expect(ids(loaded, coder({ hostSession: 'ready' }))).toContain('core__host_exec');
      expect(ids(loaded, coder({ hostSession: status }))).toEqual(['core__host_session_open']);
    });
  }

  it('R7.3 refuses a call to a gated tool with policy_denied while the session is not ready', () => {
    const view = createView(loaded, coder({ hostSession: 'closed' }));
    const d = decide(view, { toolCallId: 'c1', name: 'core__host_fs_read_file', arguments: '{"path":"README.md"}' });
    expect(d).toMatchObject({ toolCallId: 'c1', decision: 'deny', errorCode: 'policy_denied' });
  });
});

describe('provider profile switching', () => {
  it('R6.12 prefers apply_patch under the openai profile and hides edit_file', () => {
    const r = evaluate(loaded, coder({ hostSession: 'ready' }, 'openai'));
    expect(r.tools.map((t) => t.id)).toContain('core__host_fs_apply_patch');
    expect(r.filtered).toContainEqual({ id: 'core__host_fs_edit_file', reason: 'profile' });
    const names = toOpenAITools(createView(loaded, coder({ hostSession: 'ready' }, 'openai'))).map((t) => t.function.name);
    expect(names).toContain('core__host_fs_apply_patch');
    expect(names).not.toContain('core__host_fs_edit_file');
  });

  it('R6.12 prefers edit_file under the anthropic profile and hides apply_patch', () => {
    const r = evaluate(loaded, coder({ hostSession: 'ready' }, 'anthropic'));
    expect(r.tools.map((t) => t.id)).toContain('core__host_fs_edit_file');
    expect(r.filtered).toContainEqual({ id: 'core__host_fs_apply_patch', reason: 'profile' });
    const names = toAnthropicTools(createView(loaded, coder({ hostSession: 'ready' }, 'anthropic'))).map((t) => t.name);
    expect(names).toContain('core__host_fs_edit_file');
    expect(names).not.toContain('core__host_fs_apply_patch');
  });

  it('R6.12 shows neither profile-scoped edit tool when the request names no profile or an unknown one', () => {
    for (const profile of [undefined, 'mistral']) {
      const r = evaluate(loaded, coder({ hostSession: 'ready' }, profile));
      expect(r.filtered).toContainEqual({ id: 'core__host_fs_apply_patch', reason: 'profile' });
      expect(r.filtered).toContainEqual({ id: 'core__host_fs_edit_file', reason: 'profile' });
      expect(r.tools.map((t) => t.id)).toContain('core__host_fs_read_file');
    }
  });

  it('R6.12 shares the read and search primitives between profiles', () => {
    const openai = ids(loaded, coder({ hostSession: 'ready' }, 'openai'));
    const anthropic = ids(loaded, coder({ hostSession: 'ready' }, 'anthropic'));
    const shared = openai.filter((id) => anthropic.includes(id));
    expect(shared).toEqual(expect.arrayContaining(['core__host_fs_read_file', 'core__host_fs_grep', 'core__host_fs_glob', 'core__host_exec']));
  });

  it('R13.1 encodes tools in the providers wire formats with the input schema as parameters', () => {
    const view = createView(loaded, coder({ hostSession: 'ready' }, 'openai'));
    const openai = toOpenAITools(view);
    const read = openai.find((t) => t.function.name === 'core__host_fs_read_file');
    expect(read?.type).toBe('function');
    expect(read?.function.parameters).toMatchObject({ type: 'object', required: ['path'] });
    const anthropic = toAnthropicTools(view);
    expect(anthropic.map((t) => t.name)).toEqual(openai.map((t) => t.function.name));
    expect(anthropic[0]).toHaveProperty('input_schema');
  });
});

describe('deterministic batch plans', () => {
  const view = createView(loaded, coder({ hostSession: 'ready' }, 'openai'));
  const calls: ToolCall[] = [
    { toolCallId: 'a', name: 'core__host_fs_read_file', arguments: '{"path":"a.ts"}' },
    { toolCallId: 'b', name: 'core__host_fs_grep', arguments: '{"pattern":"todo"}' },
    { toolCallId: 'c', name: 'core__host_fs_write_file', arguments: '{"path":"a.ts","content":"x"}' },
    { toolCallId: 'd', name: 'core__host_fs_apply_patch', arguments: '{"patch":"--- a"}' },
    { toolCallId: 'e', name: 'core__host_fs_edit_file', arguments: '{}' },
    { toolCallId: 'f', name: 'core__host_exec', arguments: '{"command":"ls"}' },
    { toolCallId: 'g', name: 'core__host_fs_stat', arguments: '{"path":"a.ts"}' },
    { toolCallId: 'h', name: 'core__nope', arguments: '{}' },
    { toolCallId: 'i', name: 'core__host_fs_glob', arguments: '{bad json' },
  ];

  it('R9.2 puts rejected calls first, groups non-conflicting parallel-safe calls and serializes a shared resource key', () => {
    const plan = planBatch(view, calls);
    expect(plan.rejected.map((r) => [r.toolCallId, r.errorCode])).toEqual([
      ['e', 'policy_denied'],
      ['h', 'unavailable'],
      ['i', 'invalid_json'],
    ]);
    expect(plan.groups.map((g) => ({ parallel: g.parallel, ids: g.calls.map((c) => c.toolCallId) }))).toEqual([
      // a, b and c are parallel-safe with distinct (or no) resource keys; d shares c's key.
      { parallel: true, ids: ['a', 'b', 'c'] },
      { parallel: true, ids: ['d'] },
      // exec is not parallel-safe: alone, and a barrier for what follows.
      { parallel: false, ids: ['f'] },
      { parallel: true, ids: ['g'] },
    ]);
    expect(plan.groups[2].calls[0].decision).toBe('require_approval');
  });

  it('R9.3 gives the same plan for the same input, even without call ids', () => {
    const anonymous = calls.map(({ toolCallId: _id, ...c }) => c);
    const first = canonicalJson(planBatch(view, anonymous));
    const second = canonicalJson(
      planBatch(createView(loadBundle(JSON.parse(compiled.ok ? compiled.text : '')), coder({ hostSession: 'ready' }, 'openai')), anonymous),
    );
    expect(second).toBe(first);
  });
});

describe('replay', () => {
  type Event =
    | { kind: 'host'; status: string }
    | { kind: 'profile'; profile: string }
    | { kind: 'calls'; calls: ToolCall[] }
    | { kind: 'settled'; toolCallId: string; name: string; ok: boolean };

  const events: Event[] = [
    { kind: 'profile', profile: 'anthropic' },
    { kind: 'calls', calls: [{ toolCallId: '1', name: 'core__host_fs_read_file', arguments: '{"path":"x"}' }] },
    { kind: 'calls', calls: [{ toolCallId: '2', name: 'core__host_session_open', arguments: '{}' }] },
    { kind: 'settled', toolCallId: '2', name: 'core__host_session_open', ok: true },
    { kind: 'host', status: 'ready' },
    {
      kind: 'calls',
      calls: [
        { toolCallId: '3', name: 'core__host_fs_read_file', arguments: '{"path":"x"}' },
        { toolCallId: '4', name: 'core__host_fs_edit_file', arguments: '{"path":"x","oldText":"a","newText":"b"}' },
        { toolCallId: '5', name: 'core__host_fs_write_file', arguments: '{"path":"y","content":""}' },
      ],
    },
    { kind: 'profile', profile: 'openai' },
    { kind: 'host', status: 'closed' },
    { kind: 'calls', calls: [{ toolCallId: '6', name: 'core__host_exec', arguments: '{"command":"make"}' }] },
  ];

  // A reducer in the reference design's style: session state is a pure function of the events.
  function replay(l: LoadedBundle): string {
    const state = { profile: 'openai', hostSession: 'none', workflowState: 'undefined', effectiveTools: [] as string[], batches: [] as unknown[] };
    for (const e of events) {
      if (e.kind === 'host') state.hostSession = e.status;
      else if (e.kind === 'profile') state.profile = e.profile;
      else if (e.kind === 'settled' && e.ok) state.workflowState = nextState(l, state.workflowState, e.name);
      const view = createView(l, {
        subject: 'agent:coding-bot',
        groups: ['coding'],
        facts: { hostSession: state.hostSession },
        profile: state.profile,
        state: state.workflowState,
      });
      state.effectiveTools = view.result.tools.map((t) => t.id);
      if (e.kind === 'calls') state.batches.push(planBatch(view, e.calls));
    }
    return canonicalJson(state);
  }

  it('R8.1 R6.15 yields byte-identical session state for the same event stream, from the same bundle bytes', () => {
    const a = replay(loaded);
    const b = replay(loadBundle(JSON.parse(compiled.ok ? compiled.text : '')));
    expect(b).toBe(a);
    expect(JSON.parse(a).effectiveTools).toEqual(['core__host_session_open']);
  });
});
