import { describe, expect, it } from 'vitest';
import type { Bundle, DecideVector } from '../../policy-schemas/types.gen.ts';
import { conformanceFailures, runtimeSubject } from '../../runtime/conformance.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { misreadingSubject } from '../../test/conformance/misreadings.ts';
import { CONSTRAINT_MISREADINGS } from '../../test/conformance/constraint-misreadings.ts';
import { snapshot, tool } from '../../test/engine/build.ts';
import { compileBundle } from './compile-bundle.ts';

const repo = {
  type: 'object',
  additionalProperties: false,
  required: ['repo'],
  properties: { repo: { type: 'string', maxLength: 40 }, title: { type: 'string' } },
};
const bundle = (() => {
  const r = compileBundle(
    snapshot({
      policy: {
        roles: {
          // Sorted first, so its approval constraint comes before the other role's deny.
          approver: {
            groups: ['default'],
            allow: ['mcp__gh__*'],
            constraints: [
              { tools: ['mcp__gh__create_*'], otherwise: 'require_approval', arguments: { properties: { title: { maxLength: 10 } } }, reason: 'long titles' },
            ],
          },
          writer: {
            groups: ['default'],
            allow: ['mcp__gh__*'],
            constraints: [{ tools: ['mcp__gh__create_*'], otherwise: 'deny', arguments: { properties: { repo: { pattern: '^acme/' } } }, reason: 'acme only' }],
          },
        },
        bindings: { 'agent:both': ['approver', 'writer'], 'agent:writer': ['writer'] },
      },
      tools: [tool('mcp__gh__create_issue', { inputSchema: repo }), tool('mcp__gh__get_issue', { inputSchema: repo })],
    }),
    { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00.000Z' },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return JSON.parse(r.text) as Bundle;
})();
const constraintVectors = bundle.conformance.filter((v): v is DecideVector => 'call' in v && v.rules.includes('R7.11'));

describe('conformance vectors for argument constraints', () => {
  it('R12.6 pins each outcome of R7.11 the tenant can show: met, approval, deny winning, schema first, a glob', () => {
    const outcomes = constraintVectors.map((v) => `${v.expect.decision}/${v.expect.errorCode ?? ''}`);
    expect(outcomes).toContain('allow/');
    expect(outcomes).toContain('require_approval/');
    expect(outcomes).toContain('deny/policy_denied');
    expect(outcomes).toContain('deny/validation');
    // Deny wins although the approval constraint comes first for agent:both.
    expect(constraintVectors.some((v) => v.request.subject === 'agent:both' && v.expect.errorCode === 'policy_denied')).toBe(true);
  });

  it('R12.5 are reproduced by the runtime and fail every constraint misreading', () => {
    expect(conformanceFailures(bundle.conformance, runtimeSubject(loadBundle(bundle)))).toEqual([]);
    for (const { id } of CONSTRAINT_MISREADINGS) {
      expect(conformanceFailures(bundle.conformance, misreadingSubject(bundle, id), 1).length, id).toBe(1);
    }
  });
});
