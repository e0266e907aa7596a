import type { DecisionRecord } from '../../policy-schemas/types.gen.ts';

/**
 * One decision record as a runtime of the demo tenant acme-research logs it: research-bot's
 * allowed knowledge query. Tests override what they are about; `at` and `toolCallId` are theirs to give.
 */
export function decisionRecord(over: Partial<DecisionRecord> & Pick<DecisionRecord, 'at' | 'toolCallId'>): DecisionRecord {
  return {
    subject: 'agent:research-bot',
    groups: ['knowledge'],
    state: 'undefined',
    tool: 'core__knowledge-query',
    decision: 'allow',
    bundleVersion: 1,
    ...over,
  };
}
