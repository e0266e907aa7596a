// Bundle formats (docs/spec.md §2): the compiler writes v2, each fact once; runtimes read v2 and,
// for one release, v1, whose index must agree with its catalog and policy. The v1 bundles here are
// the compiler's last v1 output for the golden cases (test/fixtures/bundle-v1), signed in the test.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Bundle, BundleV1, EvaluationRequest, TenantPolicy } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { conformanceFailures, runtimeSubject } from '../../runtime/conformance.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { verifyBundle } from '../../runtime/verify-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import type { CompileOptions, Snapshot } from '../../server/compiler/compile-bundle.ts';
import { randomRequest, rng } from '../conformance/tenants.ts';
import { jwksOf, makeBundle, makeKey, revisionOf, signBytes } from '../distribution/signed-bundles.ts';
import type { TestKey } from '../distribution/signed-bundles.ts';
import { ISSUED_AT, snapshot, tool } from './build.ts';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');
const CASES = ['demo-acme-research', 'demo-globex-eng', 'globs-includes-grants'];

function v1Bundle(name: string): BundleV1 {
  return JSON.parse(readFileSync(join(fixtures, 'bundle-v1', `${name}.json`), 'utf8')) as BundleV1;
}

function v2Bundle(name: string): Bundle {
  const input = JSON.parse(readFileSync(join(fixtures, 'compile', `${name}.input.json`), 'utf8')) as { snapshot: Snapshot; options: CompileOptions };
  const r = compileBundle(input.snapshot, input.options);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return JSON.parse(r.text) as Bundle;
}

let key: TestKey;
beforeAll(async () => {
  key = await makeKey('k1');
});

/** Signs a document's canonical bytes and verifies them as a runtime would, at the instant it was issued. */
async function verifySigned(doc: object, tenant: string, issuedAt: string) {
  const text = canonicalJson(doc);
  return verifyBundle(text, await signBytes(text, key), { trustedKeys: jwksOf(key), tenant, now: new Date(issuedAt) });
}

function withRevision<T extends object>(doc: T): T {
  return { ...doc, revision: revisionOf(doc as unknown as Bundle) };
}

describe('reading v1 bundles for one release', () => {
  for (const name of CASES) {
    it(`${name}: a signed v1 bundle verifies, and answers every request as the v2 bundle of the same data does`, async () => {
      const v1 = v1Bundle(name);
      const v2 = v2Bundle(name);
      expect(v1.format).toBe('toolgate.bundle/v1');
      expect(v2.format).toBe('toolgate.bundle/v2');
      const verdict = await verifySigned(v1, v1.tenant, v1.issuedAt);
      expect(verdict.ok ? 'accepted' : verdict.message).toBe('accepted');
      const a = loadBundle(v1);
      const b = loadBundle(v2);
      // Either loader runs the other format's vectors too: the same rules, the same answers.
      expect(conformanceFailures(v2.conformance, runtimeSubject(a))).toEqual([]);
      expect(conformanceFailures(v1.conformance, runtimeSubject(b))).toEqual([]);
      expect(a.tools.map((t) => t.def)).toEqual(b.tools.map((t) => t.def));
      const r = rng(7);
      for (let i = 0; i < 200; i++) {
        const request: EvaluationRequest = randomRequest(r, v2);
        expect(evaluate(a, request), JSON.stringify(request)).toEqual(evaluate(b, request));
        const id = a.tools[i % a.tools.length].id;
        const call = { toolCallId: `c${i}`, name: id, arguments: i % 2 ? '{}' : '{"q":1}' };
        expect(decide(createView(a, request), call)).toEqual(decide(createView(b, request), call));
      }
    });
  }

  it('refuses a v1 bundle whose index grants what its policy does not (empty policy.roles, full index.roles)', async () => {
    const v1 = v1Bundle('globs-includes-grants');
    const forged = withRevision({ ...v1, policy: { ...v1.policy, roles: {}, bindings: {} } });
    expect(Object.keys(forged.index.roles).length).toBeGreaterThan(0);
    const verdict = await verifySigned(forged, v1.tenant, v1.issuedAt);
    expect(verdict.ok ? 'accepted' : [verdict.code, verdict.message]).toEqual(['malformed', expect.stringContaining('index.roles')]);
  });

  it('refuses a v1 bundle whose index differs from its catalog and policy anywhere', async () => {
    const v1 = v1Bundle('globs-includes-grants');
    const role = Object.keys(v1.index.roles)[0];
    const edits: [string, (d: BundleV1) => void][] = [
      ['index.roles', (d) => (d.index.roles[role] = { ...d.index.roles[role], allow: d.index.roles[role].allow.length > 0 ? [] : d.index.tools })],
      ['index.groups', (d) => (d.index.groups.default = ['*'])],
      ['index.grants', (d) => (d.index.grants = d.index.grants.map((g) => ({ ...g, tools: d.index.tools })))],
      ['index.profileScoped', (d) => (d.index.profileScoped = d.index.profileScoped.length > 0 ? [] : [d.index.tools[0]])],
      ['index.tools', (d) => (d.index.tools = [...d.index.tools].reverse())],
    ];
    for (const [what, edit] of edits) {
      const doc = structuredClone(v1);
      edit(doc);
      const verdict = await verifySigned(withRevision(doc), v1.tenant, v1.issuedAt);
      expect(verdict.ok ? `${what}: accepted` : verdict.code, what).toBe('malformed');
    }
  });
});

describe('the v2 format', () => {
  it('has no index: a v2 bundle carrying one (full index.roles, empty policy.roles) is refused', async () => {
    const doc = makeBundle({ tenant: 'acme', version: 1 });
    const forged = withRevision({
      ...doc,
      policy: { ...doc.policy, roles: {}, bindings: {} },
      index: { roles: { analyst: { groups: ['*'], allow: doc.catalog.tools.map((t) => t.id), deny: [] } } },
    });
    const verdict = await verifySigned(forged, 'acme', doc.issuedAt);
    expect(verdict.ok ? 'accepted' : verdict.code).toBe('malformed');
  });

  it('grants nothing through a role policy.roles does not define: a binding to one is refused', async () => {
    const doc = makeBundle({ tenant: 'acme', version: 1 });
    const forged = withRevision({ ...doc, policy: { ...doc.policy, roles: {} } });
    const verdict = await verifySigned(forged, 'acme', doc.issuedAt);
    expect(verdict.ok ? 'accepted' : [verdict.code, verdict.message]).toEqual(['malformed', expect.stringContaining('does not define')]);
  });

  it('writes each repeated input schema once, in catalog.schemas, and a schema one tool uses inline', () => {
    const shared = { type: 'object', properties: { q: { type: 'string' } } };
    const own = { type: 'object', properties: { n: { type: 'integer' } } };
    const r = compileBundle(
      snapshot({
        tools: [tool('core__a', { inputSchema: shared }), tool('core__b', { inputSchema: own }), tool('core__c', { inputSchema: { ...shared } })],
        policy: { roles: { r: { groups: ['*'], allow: ['*'] } }, bindings: { s: ['r'] } },
      }),
      { version: 1, previousRevision: null, issuedAt: ISSUED_AT },
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.bundle.catalog.schemas).toEqual([shared]);
    const [a, b, c] = r.bundle.catalog.tools as unknown as Record<string, unknown>[];
    expect([a.inputSchemaRef, a.inputSchema, b.inputSchemaRef, b.inputSchema, c.inputSchemaRef]).toEqual([0, undefined, undefined, own, 0]);
    expect(r.text.split('"q"').length - 1).toBe(1);
    const loaded = loadBundle(r.bundle);
    expect(loaded.byId.get('core__c')?.def?.inputSchema).toEqual(shared);
    const view = createView(loaded, { subject: 's', groups: ['*'] });
    expect(decide(view, { toolCallId: '1', name: 'core__c', arguments: '{"q":1}' })).toMatchObject({ decision: 'deny', errorCode: 'validation' });
    expect(decide(view, { toolCallId: '2', name: 'core__c', arguments: '{"q":"x"}' })).toMatchObject({ decision: 'allow' });
  });

  it('leaves defaults out and reads them back: groups ["default"], requiresConnection false, every state, empty lists', () => {
    const r = compileBundle(
      snapshot({
        tools: [tool('core__plain'), tool('core__nowhere', { groups: [] }), tool('core__anystate', { availableInStates: ['*'] })],
        groups: [{ name: 'default', description: '', includes: [] }],
        policy: { roles: { r: { groups: ['default'], allow: ['core__*'] } }, bindings: { s: ['r'] } },
      }),
      { version: 1, previousRevision: null, issuedAt: ISSUED_AT },
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const [anystate, nowhere, plain] = r.bundle.catalog.tools as unknown as Record<string, unknown>[];
    // The three share one input schema: named from the table.
    expect(Object.keys(plain).sort()).toEqual(['definitionHash', 'description', 'effect', 'id', 'inputSchemaRef', 'redaction']);
    expect(anystate.availableInStates).toBeUndefined();
    // [] is not the default: a tool in no group stays in no group.
    expect(nowhere.groups).toEqual([]);
    expect(r.bundle.catalog.groups).toEqual([{ name: 'default' }]);
    expect(r.bundle.catalog.states).toEqual([{ name: 'undefined' }]);
    expect(r.bundle.policy.roles).toEqual({ r: { groups: ['default'], allow: ['core__*'] } });
    expect(r.bundle.policy.grants).toBeUndefined();
    expect(r.bundle.policy.profiles).toBeUndefined();
    const loaded = loadBundle(r.bundle);
    expect(loaded.byId.get('core__plain')?.def).toMatchObject({ groups: ['default'], requiresConnection: false, description: 'The core__plain tool.' });
    const seen = evaluate(loaded, { subject: 's', state: 'elsewhere' });
    expect(seen.tools.map((t) => t.id)).toEqual(['core__anystate', 'core__plain']);
    expect(seen.filtered).toEqual([{ id: 'core__nowhere', reason: 'group' }]);
    expect(evaluate(loaded, { subject: 's', groups: ['*'] }).rejected?.groups).toEqual(['*']);
  });

  it('carries argument constraints and approval settings from the tenant policy, and the loader parses them', () => {
    const constraint = {
      tools: ['core__send', 'core__b*'],
      otherwise: 'deny' as const,
      arguments: { type: 'object', required: ['to'], properties: { to: { type: 'string', pattern: '@acme\\.example$' } } },
      reason: 'mail stays in the company',
    };
    const policy = {
      roles: {
        r: {
          groups: ['*'],
          allow: ['*'],
          constraints: [constraint, { ...constraint, tools: ['core__send'], otherwise: 'require_approval' as const, reason: 'a person looks first' }],
          approvals: { by: 'client' as const, validForSeconds: 900 },
        },
        plain: { allow: ['*'] },
      },
      bindings: { s: ['r'] },
    } as TenantPolicy;
    const r = compileBundle(snapshot({ tools: [tool('core__send'), tool('core__other')], policy }), {
      version: 1,
      previousRevision: null,
      issuedAt: ISSUED_AT,
    });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const role = r.bundle.policy.roles?.r;
    // Kept in the order written (a constraint is named by role and position), globs sorted; the default validity left out.
    expect(role?.constraints?.map((c) => [c.tools, c.otherwise, c.reason])).toEqual([
      [['core__b*', 'core__send'], 'deny', 'mail stays in the company'],
      [['core__send'], 'require_approval', 'a person looks first'],
    ]);
    expect(role?.approvals).toEqual({ by: 'client' });
    expect(r.bundle.policy.roles?.plain).toEqual({ allow: ['*'] });
    const loaded = loadBundle(r.bundle);
    const lr = loaded.roles.get('r');
    expect(lr?.approvals).toEqual({ by: 'client', validForSeconds: 900 });
    expect(loaded.roles.get('plain')?.approvals).toEqual({ by: 'person', validForSeconds: 900 });
    expect(lr?.constraints.map((c) => [c.index, c.otherwise, [...c.tools]])).toEqual([
      [0, 'deny', [0, 1]],
      [1, 'require_approval', [0, 1]],
    ]);
    expect(lr?.constraints[0].validate({ to: 'x@acme.example' })).toBe(true);
    expect(lr?.constraints[0].validate({ to: 'x@elsewhere.example' })).toBe(false);
  });

  it('refuses a bundle whose constraint or approvals do not match the bundle schema', async () => {
    const doc = makeBundle({ tenant: 'acme', version: 1 });
    const bad = [
      { constraints: [{ tools: ['core__*'], otherwise: 'maybe', arguments: {}, reason: 'r' }] },
      { constraints: [{ tools: ['core__*'], otherwise: 'deny', reason: 'r' }] },
      { approvals: { by: 'agent' } },
      { approvals: { validForSeconds: 0 } },
    ];
    for (const extra of bad) {
      const analyst = { ...doc.policy.roles?.analyst, ...extra };
      const verdict = await verifySigned(withRevision({ ...doc, policy: { ...doc.policy, roles: { analyst } } }), 'acme', doc.issuedAt);
      expect(verdict.ok ? 'accepted' : verdict.code, JSON.stringify(extra)).toBe('malformed');
    }
  });
});
