// evaluationOutline is what the compiler scores candidate requests by (the R6.15 vector): it must
// say of every request exactly what evaluate's answer holds, or the chosen vector would change.
import { describe, expect, it } from 'vitest';
import type { Bundle, EvaluationRequest } from '../../policy-schemas/types.gen.ts';
import { evaluate, evaluationOutline } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { randomRequest, randomTenant, rng } from './tenants.ts';

function outlineOfAnswer(loaded: ReturnType<typeof loadBundle>, request: EvaluationRequest, limit: number) {
  const got = evaluate(loaded, request);
  const reasons = got.filtered.map((t) => t.reason);
  return {
    rejected: got.rejected !== undefined,
    reasons: new Set(reasons),
    reasonsDescend: reasons.some((r, i) => i > 0 && reasons[i - 1] > r),
    decisions: new Set(got.tools.map((t) => t.decision)),
    firstVisible: got.tools.slice(0, limit).map((t) => loaded.byId.get(t.id)!.pos),
  };
}

describe('evaluationOutline', () => {
  it('agrees with evaluate on random requests of random tenants, unbound subjects and refused groups included', () => {
    let rejected = 0;
    let descending = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const r = compileBundle(randomTenant(seed), { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00.000Z' });
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      const bundle = JSON.parse(r.text) as Bundle;
      const loaded = loadBundle(bundle, { inputValidators: false });
      const random = rng(seed);
      for (let i = 0; i < 40; i++) {
        const request = randomRequest(random, bundle);
        const limit = 1 + (i % 4);
        const outline = evaluationOutline(loaded, request, limit);
        expect(outline, `${bundle.tenant} ${JSON.stringify(request)}`).toEqual(outlineOfAnswer(loaded, request, limit));
        if (outline.rejected) rejected++;
        if (outline.reasonsDescend) descending++;
      }
      const nobody = { subject: 'outline:nobody' };
      expect(evaluationOutline(loaded, nobody, 3)).toEqual(outlineOfAnswer(loaded, nobody, 3));
    }
    // The search reached the branches that matter.
    expect(rejected).toBeGreaterThan(0);
    expect(descending).toBeGreaterThan(0);
  });
});
