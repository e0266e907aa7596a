import { describe, expect, it } from 'vitest';
import { testFromSimulation, testName } from './test-from-simulation.ts';

describe('testFromSimulation', () => {
  it('keeps what is visible, what is hidden and why, and decisions other than allow', () => {
    const t = testFromSimulation(
      { subject: 'agent:a', groups: ['read'], state: 'review' },
      {
        roles: ['r'],
        groups: ['read'],
        state: 'review',
        tools: [
          { id: 'core__a', decision: 'allow' },
          { id: 'core__b', decision: 'require_approval' },
        ],
        filtered: [{ id: 'core__c', reason: 'denied' }],
      },
      [],
    );
    expect(t).toEqual({
      name: 'agent:a in read at review',
      request: { subject: 'agent:a', groups: ['read'], state: 'review' },
      expect: { visible: ['core__a', 'core__b'], hidden: { core__c: 'denied' }, decisions: { core__b: 'require_approval' } },
    });
  });

  it('expects a rejected request to stay rejected, under a name not yet taken', () => {
    const t = testFromSimulation(
      { subject: 'agent:a', groups: ['admin'] },
      { roles: [], groups: ['admin'], state: 'undefined', tools: [], filtered: [], rejected: { reason: 'group_not_permitted', groups: ['admin'] } },
      ['agent:a in admin'],
    );
    expect(t.expect).toEqual({ rejected: true });
    expect(t.name).toBe('agent:a in admin (2)');
    expect(testName({ subject: 'x' }, ['x', 'x (2)'])).toBe('x (3)');
  });
});
