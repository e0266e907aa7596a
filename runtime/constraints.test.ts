import { describe, expect, it } from 'vitest';
import type { Bundle, TenantPolicy } from '../policy-schemas/types.gen.ts';
import { build, tool } from '../test/engine/build.ts';
import { createView, decide } from './decide.ts';
import { evaluate } from './evaluate.ts';
import { loadBundle } from './load-bundle.ts';

const repoSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['repo', 'title'],
  properties: { repo: { type: 'string', maxLength: 100 }, title: { type: 'string', maxLength: 200 } },
};
const mailSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['to'],
  properties: { to: { type: 'string', maxLength: 200 }, body: { type: 'string' } },
};

const policy: TenantPolicy = {
  roles: {
    writer: {
      groups: ['default'],
      allow: ['mcp__github__*', 'core__send_email'],
      constraints: [
        {
          tools: ['mcp__github__create_*'],
          otherwise: 'deny',
          arguments: { required: ['repo'], properties: { repo: { type: 'string', pattern: '^acme/' } } },
          reason: 'agents write only to acme repositories',
        },
        {
          tools: ['core__send_email'],
          otherwise: 'require_approval',
          arguments: { properties: { to: { pattern: '@acme\\.example$' } } },
          reason: 'mail outside the company needs a person',
        },
      ],
    },
    auditor: {
      groups: ['default'],
      allow: ['core__send_email'],
      constraints: [
        {
          tools: ['core__send_email'],
          otherwise: 'deny',
          arguments: { properties: { to: { not: { pattern: '@rival\\.example$' } } } },
          reason: 'never mail the rival',
        },
      ],
    },
  },
  bindings: { 'agent:writer': ['writer'], 'agent:both': ['auditor', 'writer'], 'agent:plain': ['auditor'] },
};
const loaded = build({
  policy,
  tools: [
    tool('mcp__github__create_issue', { inputSchema: repoSchema, effect: 'external_side_effect' }),
    tool('mcp__github__get_issue', { inputSchema: repoSchema }),
    tool('core__send_email', { inputSchema: mailSchema, effect: 'external_side_effect' }),
  ],
});
const call = (subject: string, name: string, args: unknown) =>
  decide(createView(loaded, { subject }), { toolCallId: 'c1', name, arguments: typeof args === 'string' ? args : JSON.stringify(args) });

describe('argument constraints in decide', () => {
  it('R7.11 allows a call whose arguments meet every constraint naming the tool', () => {
    expect(call('agent:writer', 'mcp__github__create_issue', { repo: 'acme/api', title: 'x' })).toEqual({ toolCallId: 'c1', decision: 'allow' });
  });

  it('R7.11 R7.9 denies a call a deny constraint refuses, with its reason and without echoing the arguments', () => {
    const d = call('agent:writer', 'mcp__github__create_issue', { repo: 'evil/secret-repo', title: 'x' });
    expect(d).toMatchObject({
      decision: 'deny',
      errorCode: 'policy_denied',
      constraint: { role: 'writer', index: 0, otherwise: 'deny', reason: 'agents write only to acme repositories' },
    });
    expect(d.message).toContain('agents write only to acme repositories');
    expect(d.message).not.toContain('evil');
  });

  it('R7.11 applies a glob: a tool the glob does not name is not constrained', () => {
    expect(call('agent:writer', 'mcp__github__get_issue', { repo: 'evil/x', title: 'x' }).decision).toBe('allow');
  });

  it('R7.11 asks for approval when a require_approval constraint fails, even for a tool the view allows', () => {
    expect(call('agent:writer', 'core__send_email', { to: 'a@acme.example' }).decision).toBe('allow');
    const d = call('agent:writer', 'core__send_email', { to: 'someone@else.example' });
    expect(d).toMatchObject({ decision: 'require_approval', constraint: { role: 'writer', index: 1, otherwise: 'require_approval' } });
    expect(d.errorCode).toBeUndefined();
    expect(d.message).not.toContain('else.example');
  });

  it('R7.11 lets a deny constraint of one role win over an approval constraint of another, whatever the role order', () => {
    const d = call('agent:both', 'core__send_email', { to: 'boss@rival.example' });
    expect(d).toMatchObject({ decision: 'deny', errorCode: 'policy_denied', constraint: { role: 'auditor', index: 0 } });
    // Only the approval constraint fails: approval, named by the role that holds it.
    expect(call('agent:both', 'core__send_email', { to: 'x@other.example' })).toMatchObject({ decision: 'require_approval', constraint: { role: 'writer' } });
  });

  it('R7.8 R7.11 checks the input schema first: arguments failing it answer validation, not the constraint', () => {
    const d = call('agent:writer', 'mcp__github__create_issue', { repo: 'evil/x' });
    expect(d).toMatchObject({ decision: 'deny', errorCode: 'validation' });
    expect(d.constraint).toBeUndefined();
    expect(call('agent:writer', 'mcp__github__create_issue', '{').errorCode).toBe('invalid_json');
  });

  it('R7.11 fails closed on a malformed constraint an unchecked bundle may hold: no schema object is never met, an unknown otherwise denies', () => {
    const valid = build({
      policy: {
        roles: {
          odd: {
            groups: ['default'],
            allow: ['core__send_email'],
            constraints: [
              { tools: ['core__send_email'], otherwise: 'require_approval', arguments: {}, reason: 'boolean schema' },
              { tools: ['core__send_email'], otherwise: 'deny', arguments: { properties: { to: { pattern: '^x' } } }, reason: 'x only' },
            ],
          },
        },
        bindings: { 'agent:odd': ['odd'] },
      },
      tools: [tool('core__send_email', { inputSchema: mailSchema })],
    });
    // What the bundle schema refuses, as a bundle loaded without verifyBundle may still hold it.
    const bundle = structuredClone(valid.bundle) as Bundle;
    const [first, second] = bundle.policy.roles!.odd.constraints!;
    (first as { arguments: unknown }).arguments = true;
    (second as { otherwise: unknown }).otherwise = 'shrug';
    (second as { reason: unknown }).reason = 7;
    const malformed = loadBundle(bundle);
    const decideOdd = (to: string) => decide(createView(malformed, { subject: 'agent:odd' }), { name: 'core__send_email', arguments: { to } });
    // `x…` meets the second constraint, so only the boolean-schema one can ask: it is never met.
    expect(decideOdd('x@acme.example')).toMatchObject({ decision: 'require_approval', constraint: { role: 'odd', index: 0 } });
    expect(decideOdd('y@acme.example')).toMatchObject({
      decision: 'deny',
      errorCode: 'policy_denied',
      constraint: { index: 1, otherwise: 'deny', reason: '' },
    });
  });

  it('R7.11 ignores the constraints of roles the subject does not hold', () => {
    expect(call('agent:plain', 'core__send_email', { to: 'someone@else.example' }).decision).toBe('allow');
  });
});

describe('argument constraints in evaluate', () => {
  it('R6.16 reports on each visible tool the constraints that name it, and nothing on the others', () => {
    const r = evaluate(loaded, { subject: 'agent:both' });
    const byId = new Map(r.tools.map((t) => [t.id, t]));
    expect(byId.get('core__send_email')?.constraints).toEqual([
      { role: 'auditor', index: 0, otherwise: 'deny', reason: 'never mail the rival' },
      { role: 'writer', index: 1, otherwise: 'require_approval', reason: 'mail outside the company needs a person' },
    ]);
    expect(byId.get('mcp__github__create_issue')?.constraints).toEqual([
      { role: 'writer', index: 0, otherwise: 'deny', reason: 'agents write only to acme repositories' },
    ]);
    expect(byId.get('mcp__github__get_issue')).toEqual({ id: 'mcp__github__get_issue', decision: 'allow' });
  });
});
