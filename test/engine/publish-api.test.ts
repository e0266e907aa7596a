import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle, BundleVersion, EvaluationResult } from '../../policy-schemas/types.gen.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { verifyBundle } from '../../runtime/verify-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { KeyStore } from '../../server/signing/key-store.ts';
import { startTestApp } from '../support/harness.ts';
import type { TestApp } from '../support/harness.ts';
import { demoSnapshot } from './demo-snapshot.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const base = '/v1/tenants/acme-research';

async function setPolicy(tenant: string, edit: (p: Record<string, any>) => void) {
  const cur = await t.request('GET', `/v1/tenants/${tenant}/policy`);
  const policy = { ...cur.json };
  edit(policy);
  const r = await t.request('PUT', `/v1/tenants/${tenant}/policy`, { body: policy, headers: { 'if-match': cur.headers.get('etag')! } });
  expect(r.status, r.text).toBe(200);
}

describe('POST /v1/tenants/:tenant/simulate', () => {
  it('answers exactly what evaluate() answers on the compiled draft', async () => {
    const request = { subject: 'agent:analysis-bot', groups: ['advanced', 'compute', 'write'], state: 'analysis', at: '2026-01-01T00:00:00Z' };
    const r = await t.request('POST', `${base}/simulate`, { body: request });
    expect(r.status, r.text).toBe(200);
    const compiled = compileBundle(demoSnapshot('acme-research'), { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00Z' });
    if (!compiled.ok) throw new Error('demo does not compile');
    expect(r.json).toEqual(JSON.parse(JSON.stringify(evaluate(loadBundle(compiled.bundle), request))));
    expect((r.json as EvaluationResult).tools.map((x) => x.id)).toEqual(['core__complex-analysis', 'core__graph-update']);
  });

  it('answers group_not_permitted as a rejected result naming the groups', async () => {
    const r = await t.request('POST', `${base}/simulate`, { body: { subject: 'agent:research-bot', groups: ['admin'] } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ tools: [], filtered: [], rejected: { reason: 'group_not_permitted', groups: ['admin'] } });
  });

  it('refuses a malformed request with a pointer per problem', async () => {
    const r = await t.request('POST', `${base}/simulate`, { body: { groups: 'admin', extra: 1 } });
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/extra', '/groups', '/subject']);
  });

  it('answers malformed bodies with 4xx problems, never a 500', async () => {
    for (const raw of [
      '[]',
      'null',
      '"x"',
      '{"subject":"a","at":"yesterday"}',
      '{"subject":"a","facts":{"x":{}}}',
      '{"subject":"a","groups":["*","*"]}',
      '{',
    ]) {
      const sim = await t.request('POST', `${base}/simulate`, { raw });
      expect(sim.status, raw).toBeGreaterThanOrEqual(400);
      expect(sim.status, raw).toBeLessThan(500);
      const pub = await t.request('POST', `${base}/bundles`, { raw });
      expect(pub.status, raw).toBeGreaterThanOrEqual(400);
      expect(pub.status, raw).toBeLessThan(500);
    }
    expect((await t.request('POST', `${base}/simulate`, { raw: '{"subject":"a"}', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
  });

  it('is a 404 for an unknown tenant and for a tenant outside the token scope', async () => {
    expect((await t.request('POST', '/v1/tenants/nope/simulate', { body: { subject: 'x' } })).status).toBe(404);
    const other = await t.tokenFor('viewer', ['globex-eng']);
    expect((await t.request('POST', `${base}/simulate`, { body: { subject: 'x' }, token: other })).status).toBe(404);
  });
});

describe('publishing', () => {
  let v1: { version: number; revision: string };

  it('publishes the draft as version 1 with a reason, then answers 200 with that version while nothing changed', async () => {
    const first = await t.request('POST', `${base}/bundles`, { body: { reason: 'first publish' } });
    expect(first.status, first.text).toBe(201);
    v1 = first.json;
    expect(v1.version).toBe(1);
    expect(v1.revision).toMatch(/^sha256:[0-9a-f]{64}$/);
    const again = await t.request('POST', `${base}/bundles`, { body: { reason: 'again' } });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(v1);
  });

  it('serves signed bytes that a runtime accepts with the published JWKS', async () => {
    const bytes = await t.request('GET', `${base}/bundles/latest`);
    expect(bytes.status).toBe(200);
    const jwks = await t.request('GET', '/.well-known/jwks.json', { token: null });
    expect(jwks.status).toBe(200);
    const r = await verifyBundle(Buffer.from(bytes.text), bytes.headers.get('toolgate-signature'), { trustedKeys: jwks.json, tenant: 'acme-research' });
    expect(r.ok, JSON.stringify(r)).toBe(true);
  });

  it('needs a reason and a known rollback version', async () => {
    const none = await t.request('POST', `${base}/bundles`, { body: {} });
    expect(none.status).toBe(400);
    expect(none.json.errors).toEqual([{ pointer: '/reason', message: 'is required' }]);
    const bad = await t.request('POST', `${base}/bundles`, { body: { reason: 'x', rollbackTo: 99 } });
    expect(bad.status).toBe(404);
    const typo = await t.request('POST', `${base}/bundles`, { body: { reason: 'x', rollback: 1 } });
    expect(typo.status).toBe(400);
  });

  it('lets neither a viewer publish nor an editor of another tenant see the tenant', async () => {
    const viewer = await t.tokenFor('viewer', ['acme-research']);
    expect((await t.request('POST', `${base}/bundles`, { body: { reason: 'x' }, token: viewer })).status).toBe(403);
    const editor = await t.tokenFor('editor', ['globex-eng']);
    expect((await t.request('POST', `${base}/bundles`, { body: { reason: 'x' }, token: editor })).status).toBe(404);
    expect((await t.request('GET', `${base}/bundles`, { token: editor })).status).toBe(404);
  });

  it('publishes a changed draft as the next version, diffs it, and lists who, when, why', async () => {
    await setPolicy('acme-research', (p) => {
      p.roles.researcher.deny = ['core__text-completion'];
    });
    const draftDiff = await t.request('GET', `${base}/bundles/latest/diff/draft`);
    expect(draftDiff.status, draftDiff.text).toBe(200);
    expect(draftDiff.json.identical).toBe(false);
    expect(draftDiff.json.to.version).toBe('draft');
    expect(draftDiff.json.roles).toContainEqual({ role: 'researcher', status: 'changed', added: [], removed: ['core__text-completion'] });
    expect(draftDiff.json.decisions).toContainEqual({ subject: 'agent:research-bot', tool: 'core__text-completion', from: 'allow', to: 'deny' });

    const second = await t.request('POST', `${base}/bundles`, { body: { reason: 'stop text completion for researchers' } });
    expect(second.status).toBe(201);
    expect(second.json.version).toBe(2);

    const diff = await t.request('GET', `${base}/bundles/1/diff/2`);
    expect(diff.json.decisions).toEqual(draftDiff.json.decisions);
    expect(diff.json.from).toEqual({ version: 1, revision: v1.revision });

    const list = await t.request('GET', `${base}/bundles`);
    const items = list.json.items as BundleVersion[];
    expect(items.map((i) => i.version)).toEqual([2, 1]);
    expect(items[0]).toMatchObject({
      reason: 'stop text completion for researchers',
      publishedBy: expect.stringMatching(/^token:/),
      previousRevision: v1.revision,
      rollbackOf: null,
    });
    expect(items[0].summary.changes.decisionsChanged).toBeGreaterThan(0);
    expect(items[1].summary.changes).toEqual({ toolsAdded: 0, toolsRemoved: 0, decisionsChanged: 0 });
  });

  it('rolls back by republishing an earlier version content as a new version, audited as a rollback', async () => {
    const r = await t.request('POST', `${base}/bundles`, { body: { reason: 'undo', rollbackTo: 1 } });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({ version: 3, revision: v1.revision });
    const v3 = await t.request('GET', `${base}/bundles/3`);
    const bundle = JSON.parse(v3.text) as Bundle;
    expect(bundle.version).toBe(3);
    expect(bundle.previousRevision).not.toBe(v1.revision);
    const again = await t.request('POST', `${base}/bundles`, { body: { reason: 'undo twice', rollbackTo: 1 } });
    expect(again.status).toBe(200);
    expect(again.json.version).toBe(3);
    const audit = await t.request('GET', '/v1/audit?entityType=bundle');
    const actions = (audit.json.items as { action: string; entityId: string; reason: string }[]).map((e) => [e.action, e.entityId, e.reason]);
    expect(actions).toEqual(
      expect.arrayContaining([
        ['publish', '1', 'first publish'],
        ['rollback', '3', 'undo'],
      ]),
    );
    expect(actions.filter(([a]) => a === 'publish' || a === 'rollback')).toHaveLength(3);
  });

  it('lets an auditor read versions and diffs, and diffs the draft on either side', async () => {
    const auditor = await t.tokenFor('auditor');
    expect((await t.request('GET', `${base}/bundles`, { token: auditor })).status).toBe(200);
    const d = await t.request('GET', `${base}/bundles/draft/diff/1`, { token: auditor });
    expect(d.status, d.text).toBe(200);
    expect(d.json.from.version).toBe('draft');
    expect((await t.request('GET', `${base}/bundles/latest/diff/latest`)).json.identical).toBe(true);
    expect((await t.request('GET', '/v1/tenants/nope/bundles')).status).toBe(404);
  });

  it('refuses to publish a draft that does not compile, listing every error, and changes nothing', async () => {
    // Saves and the compiler share one judge, so only data stored before a rule existed (written
    // straight to the database here) can fail to compile: a subject in Casbin's role namespace.
    const row = await t.deps.database.db.selectFrom('tenant_policies').select('body').where('tenant', '=', 'acme-research').executeTakeFirstOrThrow();
    const stored = JSON.parse(row.body);
    stored.bindings['role:researcher'] = ['researcher'];
    await t.deps.database.db
      .updateTable('tenant_policies')
      .set({ body: JSON.stringify(stored) })
      .where('tenant', '=', 'acme-research')
      .execute();
    const sim = await t.request('POST', `${base}/simulate`, { body: { subject: 'agent:research-bot' } });
    expect(sim.status).toBe(422);
    expect(sim.json.code).toBe('compile_error');
    expect(sim.json.errors).toContainEqual(expect.objectContaining({ pointer: '/policy/bindings/role:researcher' }));
    const pub = await t.request('POST', `${base}/bundles`, { body: { reason: 'broken' } });
    expect(pub.status).toBe(422);
    expect((await t.request('GET', `${base}/bundles`)).json.items).toHaveLength(3);
  });

  it('diffs between versions with clear errors for unknown ones', async () => {
    expect((await t.request('GET', `${base}/bundles/1/diff/3`)).json.identical).toBe(true);
    expect((await t.request('GET', `${base}/bundles/1/diff/9`)).status).toBe(404);
    expect((await t.request('GET', `${base}/bundles/one/diff/2`)).status).toBe(400);
  });
});

describe('key rotation', () => {
  it('signs the next publish with a key rotated and promoted by another process, old keys staying in the JWKS', async () => {
    const before = (await t.request('GET', '/.well-known/jwks.json', { token: null })).json.keys.map((k: { kid: string }) => k.kid);
    const cli = new KeyStore(t.deps.config.keysDir);
    const rotated = await cli.rotate();
    await cli.promote(rotated.kid);
    const jwks = (await t.request('GET', '/.well-known/jwks.json', { token: null })).json;
    expect(jwks.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([...before, rotated.kid].sort());
    const r = await t.request('POST', '/v1/tenants/globex-eng/bundles', { body: { reason: 'after rotation' } });
    expect(r.status, r.text).toBe(201);
    const sig = await t.request('GET', `/v1/tenants/globex-eng/bundles/${r.json.version}/signature`);
    const header = JSON.parse(Buffer.from(sig.text.trim().split('.')[0], 'base64url').toString());
    expect(header).toEqual({ alg: 'EdDSA', kid: rotated.kid, typ: 'toolgate-bundle+jws' });
    const list = await t.request('GET', '/v1/tenants/globex-eng/bundles');
    expect(list.json.items[0].kid).toBe(rotated.kid);
  });
});

describe('refresh', () => {
  it('re-issues unchanged content as a new version with a later expiry only when asked', async () => {
    const base2 = '/v1/tenants/globex-eng/bundles';
    const first = await t.request('POST', base2, { body: { reason: 'make sure there is one' } });
    const same = await t.request('POST', base2, { body: { reason: 'nothing changed' } });
    expect(same.status).toBe(200);
    expect(same.json).toEqual({ version: first.json.version, revision: first.json.revision });
    await new Promise((r) => setTimeout(r, 5));
    const refreshed = await t.request('POST', base2, { body: { reason: 'extend expiry', refresh: true } });
    expect(refreshed.status).toBe(201);
    expect(refreshed.json).toEqual({ version: first.json.version + 1, revision: first.json.revision });
    const items = (await t.request('GET', base2)).json.items as BundleVersion[];
    expect(Date.parse(items[0].expiresAt)).toBeGreaterThan(Date.parse(items[1].expiresAt));
    expect(items[0].previousRevision).toBe(first.json.revision);
  });
});
