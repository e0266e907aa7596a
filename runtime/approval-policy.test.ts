import { describe, expect, it } from 'vitest';
import { approvalSettings, DEFAULT_APPROVAL_VALID_SECONDS } from './approval-policy.ts';

const policy = {
  roles: {
    mailer: { approvals: { by: 'client', validForSeconds: 300 } },
    helper: { approvals: { by: 'client' } },
    reviewer: { approvals: { by: 'person', validForSeconds: 60 } },
    plain: {},
  },
};

describe('approvalSettings', () => {
  it('takes a client’s confirmation only when every role of the subject says approvals.by: "client"', () => {
    expect(approvalSettings(policy, ['mailer', 'helper']).by).toBe('client');
    expect(approvalSettings(policy, ['mailer', 'reviewer']).by).toBe('person');
    expect(approvalSettings(policy, ['mailer', 'plain']).by).toBe('person');
    expect(approvalSettings(policy, []).by).toBe('person');
    expect(approvalSettings(undefined, ['mailer']).by).toBe('person');
  });

  it('lets a receipt live as long as the shortest validForSeconds among the roles, 900 s by default', () => {
    expect(approvalSettings(policy, ['mailer', 'reviewer']).validForSeconds).toBe(60);
    expect(approvalSettings(policy, ['mailer', 'helper']).validForSeconds).toBe(300);
    expect(approvalSettings(policy, ['plain']).validForSeconds).toBe(DEFAULT_APPROVAL_VALID_SECONDS);
    expect(approvalSettings(policy, []).validForSeconds).toBe(900);
  });
});
