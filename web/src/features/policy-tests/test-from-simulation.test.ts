import { describe, expect, it } from 'vitest';
import type { EvaluationResult } from '../../../../policy-schemas/types.gen.ts';
import { testFromChoice, testName } from './test-from-simulation.ts';

const result: EvaluationResult = {
  roles: ['r'],
  groups: ['read'],
  state: 'review',
  tools: [
    { id: 'core__a', decision: 'allow' },
    { id: 'core__b', decision: 'require_approval' },
  ],
  filtered: [
    { id: 'core__c', reason: 'denied' },
    { id: 'core__d', reason: 'group' },
  ],
};
const request = { subject: 'agent:a', groups: ['read'], state: 'review' };
const none = { visible: [], hidden: [], decisions: [], anyReason: true, rejected: false };

describe('testFromChoice', () => {
  it('asserts only what the admin chose: one visible tool and one hidden for any reason', () => {
    const t = testFromChoice(request, result, { ...none, visible: ['core__a'], hidden: ['core__c'] }, 'mine');
    expect(t).toEqual({ name: 'mine', request, expect: { visible: ['core__a'], hidden: { core__c: 'any' } } });
  });

  it('keeps the reason shown now only when asked, and a decision the admin ticked', () => {
    const t = testFromChoice(request, result, { ...none, hidden: ['core__d'], anyReason: false, decisions: ['core__b'] }, 'x');
    expect(t?.expect).toEqual({ hidden: { core__d: 'group' }, decisions: { core__b: 'require_approval' } });
  });

  it('gives no test when nothing was chosen, and ignores ids the answer does not hold', () => {
    expect(testFromChoice(request, result, none, 'x')).toBeNull();
    expect(testFromChoice(request, result, { ...none, visible: ['core__c'], hidden: ['core__a'] }, 'x')).toBeNull();
  });

  it('expects a rejected request to stay rejected, under a name not yet taken', () => {
    const rejected: EvaluationResult = {
      roles: [],
      groups: ['admin'],
      state: 'undefined',
      tools: [],
      filtered: [],
      rejected: { reason: 'group_not_permitted', groups: ['admin'] },
    };
    expect(testFromChoice({ subject: 'agent:a', groups: ['admin'] }, rejected, { ...none, rejected: true }, 'n')?.expect).toEqual({ rejected: true });
    expect(testName({ subject: 'agent:a', groups: ['admin'] }, ['agent:a in admin'])).toBe('agent:a in admin (2)');
    expect(testName({ subject: 'x' }, ['x', 'x (2)'])).toBe('x (3)');
  });
});
