import { describe, expect, it } from 'vitest';
import type { Bundle } from '../policy-schemas/types.gen.ts';
import { makeBundle } from '../test/distribution/signed-bundles.ts';
import { approvalSettings, DEFAULT_APPROVAL_VALID_SECONDS } from './approval-policy.ts';
import { clientConfirmation } from './approval-receipt.ts';
import { createView, decide } from './decide.ts';
import { loadBundle } from './load-bundle.ts';

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

describe('a client’s confirmation in decide', () => {
  // core__tool-0002 is a state_change tool, which the analyst role asks approval for.
  const call = { name: 'core__tool-0002', arguments: { query: 'q' } };
  function viewWith(roles: Record<string, unknown>) {
    const bundle = makeBundle({ tenant: 'acme', version: 1 }) as Bundle;
    const analyst = bundle.policy.roles!.analyst;
    bundle.policy.roles = { analyst: { ...analyst, approvals: { by: 'client' } } };
    for (const [name, approvals] of Object.entries(roles)) bundle.policy.roles[name] = { groups: ['default'], allow: ['core__*'], approvals } as never;
    bundle.policy.bindings = { 'agent:support-bot': ['analyst', ...Object.keys(roles)] };
    return createView(loadBundle(bundle), { subject: 'agent:support-bot' });
  }

  it('counts only when every role of the subject takes one, as the loaded roles say', () => {
    expect(decide(viewWith({}), call, { approval: clientConfirmation('c-1') })).toMatchObject({ decision: 'allow', approval: { id: 'c-1', by: 'client' } });
    expect(decide(viewWith({ helper: { by: 'client' } }), call, { approval: clientConfirmation('c-2') })).toMatchObject({ decision: 'allow' });
    const mixed = decide(viewWith({ reviewer: { by: 'person' } }), call, { approval: clientConfirmation('c-3') });
    expect(mixed).toMatchObject({ decision: 'deny', errorCode: 'approval_invalid' });
    const unset = decide(viewWith({ plain: {} }), call, { approval: clientConfirmation('c-4') });
    expect(unset).toMatchObject({ decision: 'deny', errorCode: 'approval_invalid' });
  });

  it('hands the evidence the arguments as decide read them: text parsed once, as the schema saw it', () => {
    const seen: unknown[] = [];
    const recording = { redeem: (c: { arguments: unknown }) => (seen.push(c.arguments), { ok: true as const, id: 'c-5', by: 'client' as const }) };
    const view = viewWith({});
    expect(decide(view, { ...call, arguments: '{ "query": "q" }' }, { approval: recording }).decision).toBe('allow');
    expect(seen).toEqual([{ query: 'q' }]);
  });
});
