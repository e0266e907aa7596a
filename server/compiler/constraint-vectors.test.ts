import { describe, expect, it } from 'vitest';
import type { Bundle, DecideVector, EvaluateVector, EvaluationResult } from '../../policy-schemas/types.gen.ts';
import { type ConformanceSubject, conformanceFailures, runtimeSubject } from '../../runtime/conformance.ts';
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

  it('R6.16 pins the constraints evaluate reports: both roles in order on a tool they name, none on one they do not', () => {
    const reported = bundle.conformance.filter((v): v is EvaluateVector => !('call' in v) && v.expect.constraints !== undefined);
    expect(reported).toHaveLength(1);
    expect(reported[0].rules).toContain('R6.16');
    expect(reported[0].request.subject).toBe('agent:both');
    expect(reported[0].expect.constraints).toEqual({
      mcp__gh__create_issue: [
        { role: 'approver', index: 0, otherwise: 'require_approval', reason: 'long titles' },
        { role: 'writer', index: 0, otherwise: 'deny', reason: 'acme only' },
      ],
      mcp__gh__get_issue: [],
    });
  });

  it('R6.16 vectors fail an evaluate that drops, reorders, invents or empties the reported constraints', () => {
    const loaded = loadBundle(bundle);
    const runtime = runtimeSubject(loaded);
    // The runtime's whole answer, its tools' constraints rewritten (no evaluateNamed: every vector sees the rewrite).
    const rewriting = (rewrite: (t: EvaluationResult['tools'][number]) => EvaluationResult['tools'][number]): ConformanceSubject => ({
      evaluate: (request) => {
        const answer = runtime.evaluate(request);
        return { ...answer, tools: answer.tools.map(rewrite) };
      },
      decide: runtime.decide,
    });
    const misreadings = {
      dropped: ({ constraints: _gone, ...t }: EvaluationResult['tools'][number]) => t,
      reordered: (t: EvaluationResult['tools'][number]) => (t.constraints ? { ...t, constraints: [...t.constraints].reverse() } : t),
      everywhere: (t: EvaluationResult['tools'][number]) => ({
        ...t,
        constraints: [{ role: 'writer', index: 0, otherwise: 'deny' as const, reason: 'acme only' }],
      }),
      emptyMember: (t: EvaluationResult['tools'][number]) => (t.constraints ? t : { ...t, constraints: [] }),
    };
    expect(
      conformanceFailures(
        bundle.conformance,
        rewriting((t) => t),
      ),
    ).toEqual([]);
    for (const [name, rewrite] of Object.entries(misreadings)) {
      const failures = conformanceFailures(bundle.conformance, rewriting(rewrite));
      expect(
        failures.map((f) => f.rules),
        name,
      ).toContainEqual(expect.arrayContaining(['R6.16']));
    }
  });
});
