import { describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { requestJson, requestOf } from './decision-store.ts';

const base: DecisionRecord = {
  at: '2026-01-01T00:00:00Z',
  toolCallId: 'c',
  subject: 'agent:é "quoted"',
  groups: ['b', 'a'],
  state: 'undefined',
  tool: 'core__x',
  decision: 'allow',
  bundleVersion: 1,
};

describe('requestJson', () => {
  it('is the RFC 8785 canonical JSON of the request behind a record', () => {
    for (const r of [
      base,
      { ...base, profile: 'openai' },
      { ...base, facts: { zeta: 1.5, alpha: 'x\u2028y', Beta: true, ä: -0, n: 1e21 } },
      { ...base, facts: {} },
    ]) {
      expect(requestJson(r)).toBe(canonicalJson(requestOf(r)));
    }
  });
});
