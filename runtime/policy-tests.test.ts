import { describe, expect, it } from 'vitest';
import type { TenantPolicy } from '../policy-schemas/types.gen.ts';
import { build, tool } from '../test/engine/build.ts';
import { failuresOf, runPolicyTests } from './policy-tests.ts';

const policy: TenantPolicy = {
  roles: {
    reader: { groups: ['read'], allow: ['core__*'], deny: ['core__secret'], requireApproval: ['state_change'] },
  },
  bindings: { 'agent:r': ['reader'] },
  profiles: {},
};
const loaded = build({
  groups: [
    { name: 'read', includes: [] },
    { name: 'write', includes: [] },
  ],
  policy,
  tools: [
    tool('core__read', { groups: ['read'] }),
    tool('core__secret', { groups: ['read'] }),
    tool('core__change', { groups: ['read'], effect: 'state_change' }),
  ],
});

describe('runPolicyTests', () => {
  it('passes a test whose every expectation holds', () => {
    const [o] = runPolicyTests(loaded, [
      {
        name: 'reader',
        request: { subject: 'agent:r', groups: ['read'] },
        expect: { visible: ['core__read'], hidden: { core__secret: 'denied' }, decisions: { core__change: 'require_approval' }, rejected: false },
      },
    ]);
    expect(o).toEqual({ name: 'reader', passed: true, failures: [] });
  });

  it('holds a hidden expectation of any reason whatever the reason, and fails it only when the tool is visible', () => {
    const [held, broken] = runPolicyTests(loaded, [
      { name: 'any reason', request: { subject: 'agent:r', groups: ['read'] }, expect: { hidden: { core__secret: 'any' } } },
      { name: 'visible', request: { subject: 'agent:r', groups: ['read'] }, expect: { hidden: { core__read: 'any' } } },
    ]);
    expect(held.passed).toBe(true);
    expect(broken.failures.map((f) => [f.pointer, f.expected, f.seen])).toEqual([
      ['/tests/1/expect/hidden/core__read', 'core__read hidden', 'core__read visible (allow)'],
    ]);
  });

  it('gives one failure per expectation that does not hold, pointing at it and saying what was seen', () => {
    const outcomes = runPolicyTests(loaded, [
      { name: 'ok', request: { subject: 'agent:r', groups: ['read'] }, expect: { visible: ['core__read'] } },
      {
        name: 'wrong',
        request: { subject: 'agent:r', groups: ['read'] },
        expect: {
          visible: ['core__read', 'core__secret', 'core__gone'],
          hidden: { core__read: 'denied' },
          decisions: { core__change: 'allow' },
          rejected: true,
        },
      },
    ]);
    expect(outcomes.map((o) => o.passed)).toEqual([true, false]);
    expect(failuresOf(outcomes).map((f) => [f.pointer, f.seen])).toEqual([
      ['/tests/1/expect/rejected', 'it accepted (2 tools visible)'],
      ['/tests/1/expect/visible/1', 'core__secret hidden (denied)'],
      ['/tests/1/expect/visible/2', 'core__gone not in the bundle'],
      ['/tests/1/expect/hidden/core__read', 'core__read visible (allow)'],
      ['/tests/1/expect/decisions/core__change', 'core__change visible (require_approval)'],
    ]);
    expect(outcomes[1].failures[1].message).toBe('test "wrong": expected core__secret visible, saw core__secret hidden (denied)');
  });

  it('fails every tool expectation of a rejected request, and passes `rejected: true`', () => {
    const [rejected, accepted] = runPolicyTests(loaded, [
      { name: 'write is not permitted', request: { subject: 'agent:r', groups: ['write'] }, expect: { rejected: true } },
      { name: 'expects a tool anyway', request: { subject: 'agent:r', groups: ['write'] }, expect: { visible: ['core__read'] } },
    ]);
    expect(rejected.passed).toBe(true);
    expect(accepted.failures).toEqual([
      expect.objectContaining({ pointer: '/tests/1/expect/visible/0', seen: 'the whole request rejected (group_not_permitted: write)' }),
    ]);
  });
});
