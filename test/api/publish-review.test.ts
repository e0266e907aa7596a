import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { editPolicy as editPolicyOf } from '../support/edit-policy.ts';

let t: TestApp;
let editor: string;
let otherEditor: string;
let outsider: string;
const T = 'acme-research';

beforeAll(async () => {
  t = await startTestApp();
  editor = await t.tokenFor('editor', [T]);
  otherEditor = await t.tokenFor('editor', [T]);
  outsider = await t.tokenFor('editor', ['globex-eng']);
  expect((await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'baseline' } })).status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

const editPolicy = (change: (p: Record<string, any>) => void, token?: string) => editPolicyOf(t, T, change, { token, reason: 'test edit' });

const versions = async () => (await t.request('GET', `/v1/tenants/${T}/bundles`)).json.items.length as number;
const events = async (entityType: string) => (await t.request('GET', `/v1/audit?entityType=${entityType}&limit=500`)).json.items as any[];

describe('publish review', () => {
  it('refuses a review rule that asks for more than one approval or an unknown mode', async () => {
    const cur = await t.request('GET', `/v1/tenants/${T}/policy`);
    const r = await t.request('PUT', `/v1/tenants/${T}/policy`, {
      body: { ...cur.json, review: { publish: 'always', approvals: 2 } },
      headers: { 'if-match': cur.headers.get('etag')! },
    });
    expect(r.status).toBe(400);
    const pointers = r.json.errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/review/publish', '/review/approvals']));
  });

  it('turns a publish into a request naming the draft revision, its diff, impact and tests', async () => {
    await editPolicy((p) => {
      p.review = { publish: 'required', approvals: 1 };
    });
    await editPolicy((p) => {
      p.roles.researcher.deny = ['core__text-completion'];
    });
    const before = await versions();
    const r = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'researchers stop completing text' }, token: editor });
    expect(r.status, r.text).toBe(202);
    expect(r.json).toMatchObject({ status: 'pending', tenant: T, basedOn: 1, stale: false, reason: 'researchers stop completing text' });
    expect(r.json.revision).toMatch(/^sha256:[0-9a-f]{64}$/);
    const draftDiff = await t.request('GET', `/v1/tenants/${T}/bundles/latest/diff/draft`);
    expect(r.json.revision).toBe(draftDiff.json.to.revision);
    expect(r.json.diff.roles).toEqual(draftDiff.json.roles);
    expect(r.json.diff.roles).toContainEqual(expect.objectContaining({ role: 'researcher', removed: ['core__text-completion'] }));
    expect(r.json.impact).toMatchObject({ calls: 0 });
    expect(Array.isArray(r.json.tests)).toBe(true);
    expect(await versions()).toBe(before);
    // Asking again for the same draft answers the same request.
    const again = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'again' }, token: otherEditor });
    expect(again.status).toBe(202);
    expect(again.json.id).toBe(r.json.id);
    // The list leaves the review material out; the request itself has it.
    const listed = (await t.request('GET', `/v1/tenants/${T}/publish-requests?status=pending`)).json.items[0];
    expect(listed).toMatchObject({ id: r.json.id, stale: false });
    expect(listed).not.toHaveProperty('diff');
    expect((await t.request('GET', `/v1/tenants/${T}/publish-requests/${r.json.id}`)).json.diff).toEqual(r.json.diff);
    const audit = await events('publish-request');
    expect(audit.filter((e) => e.entityId === r.json.id && e.action === 'request')).toHaveLength(1);
  });

  it('never lets the requester approve their own request', async () => {
    const [req] = (await t.request('GET', `/v1/tenants/${T}/publish-requests?status=pending`)).json.items;
    const r = await t.request('POST', `/v1/tenants/${T}/publish-requests/${req.id}/approve`, { body: {}, token: editor });
    expect(r.status).toBe(403);
    expect(r.json.detail).toMatch(/another person must review it/);
  });

  it('hides the queue from an editor of another tenant and refuses a viewer', async () => {
    expect((await t.request('GET', `/v1/tenants/${T}/publish-requests`, { token: outsider })).status).toBe(404);
    const viewer = await t.tokenFor('viewer', [T]);
    const [req] = (await t.request('GET', `/v1/tenants/${T}/publish-requests?status=pending`)).json.items;
    expect((await t.request('POST', `/v1/tenants/${T}/publish-requests/${req.id}/approve`, { body: {}, token: viewer })).status).toBe(403);
  });

  it('answers bad input with pointers', async () => {
    const bad = await t.request('GET', `/v1/tenants/${T}/publish-requests?status=open`);
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].pointer).toBe('/query/status');
    expect((await t.request('POST', `/v1/tenants/${T}/publish-requests/nope/approve`, { body: {} })).status).toBe(404);
    const [req] = (await t.request('GET', `/v1/tenants/${T}/publish-requests?status=pending`)).json.items;
    const noReason = await t.request('POST', `/v1/tenants/${T}/publish-requests/${req.id}/reject`, { body: {}, token: otherEditor });
    expect(noReason.status).toBe(400);
    expect(noReason.json.errors[0].pointer).toBe('/reason');
    const extra = await t.request('POST', `/v1/tenants/${T}/publish-requests/${req.id}/reject`, { body: { reason: 'x', verdict: 'no' }, token: otherEditor });
    expect(extra.status).toBe(400);
    expect((await t.request('GET', `/v1/tenants/${T}/publish-requests/${req.id}`)).json.status).toBe('pending');
  });

  it('approved by another person, publishes exactly the reviewed revision and audits who asked and approved', async () => {
    const [req] = (await t.request('GET', `/v1/tenants/${T}/publish-requests?status=pending`)).json.items;
    const r = await t.request('POST', `/v1/tenants/${T}/publish-requests/${req.id}/approve`, { body: { reason: 'looks right' }, token: otherEditor });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ status: 'published', publishedVersion: 2, revision: req.revision, decisionReason: 'looks right' });
    expect(r.json.requestedByLabel).toBe('editor for tests');
    expect(r.json.decidedByLabel).toBe('editor for tests');
    expect(r.json.decidedBy).not.toBe(r.json.requestedBy);
    const latest = await t.request('GET', `/v1/tenants/${T}/bundles/latest`);
    expect(latest.headers.get('etag')).toContain(req.revision);
    const publish = (await events('bundle')).find((e) => e.action === 'publish' && e.entityId === '2');
    expect(publish.after.review).toMatchObject({ publishRequest: req.id, requestedBy: req.requestedBy });
    expect(publish.after.review.approvedBy).not.toBe(req.requestedBy);
    expect((await events('publish-request')).some((e) => e.action === 'approve' && e.entityId === req.id)).toBe(true);
    // Decided requests stay decided.
    expect((await t.request('POST', `/v1/tenants/${T}/publish-requests/${req.id}/approve`, { body: {}, token: otherEditor })).status).toBe(409);
  });

  it('runs the policy tests again on approval: a test added since the request still guards it', async () => {
    await editPolicy((p) => {
      p.roles.researcher.allow = p.roles.researcher.allow.filter((g: string) => g !== 'core__knowledge-query');
    });
    const asked = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'researchers stop querying' }, token: editor });
    expect(asked.status).toBe(202);
    const cur = await t.request('GET', `/v1/tenants/${T}/tests`);
    const test = {
      name: 'research bot queries knowledge',
      request: { subject: 'agent:research-bot', groups: ['knowledge'] },
      expect: { visible: ['core__knowledge-query'] },
    };
    const put = await t.request('PUT', `/v1/tenants/${T}/tests`, {
      body: { tests: [test] },
      headers: { 'if-match': cur.headers.get('etag')!, 'toolgate-reason': 'guard' },
    });
    expect(put.status, put.text).toBe(200);
    const before = await versions();
    const r = await t.request('POST', `/v1/tenants/${T}/publish-requests/${asked.json.id}/approve`, { body: {}, token: otherEditor });
    expect(r.status).toBe(422);
    expect(r.json.code).toBe('tests_failed');
    expect(await versions()).toBe(before);
    // Back as it was, for the tests that follow.
    const now = await t.request('GET', `/v1/tenants/${T}/tests`);
    await t.request('PUT', `/v1/tenants/${T}/tests`, { body: { tests: [] }, headers: { 'if-match': now.headers.get('etag')!, 'toolgate-reason': 'done' } });
    await editPolicy((p) => {
      p.roles.researcher.allow = [...p.roles.researcher.allow, 'core__knowledge-query'];
    });
    await t.request('POST', `/v1/tenants/${T}/publish-requests/${asked.json.id}/reject`, { body: { reason: 'superseded' }, token: otherEditor });
  });

  it('refuses a stale request with 409 stale and publishes nothing', async () => {
    await editPolicy((p) => {
      p.roles.researcher.deny = [];
    });
    const asked = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'give text completion back' }, token: editor });
    expect(asked.status).toBe(202);
    await editPolicy((p) => {
      p.roles.analyst.deny = ['core__reset-workflow', 'core__text-completion'];
    });
    const listed = (await t.request('GET', `/v1/tenants/${T}/publish-requests/${asked.json.id}`)).json;
    expect(listed.stale).toBe(true);
    const before = await versions();
    const r = await t.request('POST', `/v1/tenants/${T}/publish-requests/${asked.json.id}/approve`, { body: {}, token: otherEditor });
    expect(r.status).toBe(409);
    expect(r.json.code).toBe('stale');
    expect(await versions()).toBe(before);
    expect((await t.request('GET', `/v1/tenants/${T}/publish-requests/${asked.json.id}`)).json.status).toBe('pending');
  });

  it('rejects with a reason, audited, and a rejected request cannot be approved', async () => {
    const [req] = (await t.request('GET', `/v1/tenants/${T}/publish-requests?status=pending`)).json.items;
    const r = await t.request('POST', `/v1/tenants/${T}/publish-requests/${req.id}/reject`, { body: { reason: 'not this week' }, token: otherEditor });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'rejected', decisionReason: 'not this week' });
    const ev = (await events('publish-request')).find((e) => e.action === 'reject' && e.entityId === req.id);
    expect(ev.reason).toBe('not this week');
    expect((await t.request('POST', `/v1/tenants/${T}/publish-requests/${req.id}/approve`, { body: {}, token: editor })).status).toBe(409);
  });

  it('lets only an admin publish in an emergency, audited as one', async () => {
    const byEditor = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'now', emergency: true }, token: editor });
    expect(byEditor.status).toBe(403);
    expect(byEditor.json.errors[0].pointer).toBe('/emergency');
    const before = await versions();
    const r = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'incident 42: cut text completion now', emergency: true } });
    expect(r.status, r.text).toBe(201);
    expect(await versions()).toBe(before + 1);
    const ev = (await events('bundle')).find((e) => e.action === 'publish' && e.entityId === String(r.json.version));
    expect(ev.after.emergency).toBe(true);
    expect(ev.reason).toBe('incident 42: cut text completion now');
  });

  it('lets only an admin turn the review rule off, and a reset to a published version keeps it', async () => {
    const cur = await t.request('GET', `/v1/tenants/${T}/policy`, { token: editor });
    const { review: _review, ...without } = cur.json;
    const r = await t.request('PUT', `/v1/tenants/${T}/policy`, { body: without, headers: { 'if-match': cur.headers.get('etag')! }, token: editor });
    expect(r.status).toBe(403);
    expect(r.json.errors[0].pointer).toBe('/review');
    const optional = await t.request('PUT', `/v1/tenants/${T}/policy`, {
      body: { ...cur.json, review: { publish: 'optional' } },
      headers: { 'if-match': cur.headers.get('etag')! },
      token: editor,
    });
    expect(optional.status).toBe(403);
    const reset = await t.request('POST', `/v1/tenants/${T}/policy/reset`, {
      body: { version: 1, reason: 'back to the baseline draft' },
      headers: { 'if-match': cur.headers.get('etag')! },
      token: editor,
    });
    expect(reset.status, reset.text).toBe(200);
    expect((await t.request('GET', `/v1/tenants/${T}/policy`)).json.review).toEqual({ publish: 'required', approvals: 1 });
  });

  it('sends a rollback through review too', async () => {
    const r = await t.request('POST', `/v1/tenants/${T}/bundles`, { body: { reason: 'back to v1', rollbackTo: 1 }, token: editor });
    expect(r.status).toBe(202);
    expect(r.json.rollbackTo).toBe(1);
    const ok = await t.request('POST', `/v1/tenants/${T}/publish-requests/${r.json.id}/approve`, { body: {}, token: otherEditor });
    expect(ok.status, ok.text).toBe(200);
    const latest = (await t.request('GET', `/v1/tenants/${T}/bundles`)).json.items;
    expect(latest.find((v: { version: number }) => v.version === ok.json.publishedVersion).rollbackOf).toBe(1);
  });
});

describe('promote', () => {
  it('shows the plan and changes nothing with ?plan=1', async () => {
    const before = await t.request('GET', '/v1/tenants/globex-eng/policy');
    const r = await t.request('POST', `/v1/tenants/${T}/promote?plan=1`, { body: { to: 'globex-eng' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.applied).toBe(false);
    expect(r.json.roles.added).toEqual(expect.arrayContaining(['researcher', 'analyst']));
    expect(r.json.roles.removed).toEqual(expect.arrayContaining(['coder', 'reviewer']));
    expect(r.json.grants.added).toEqual(expect.arrayContaining(['conn-knowledge-graph-prod']));
    expect(r.json.diff.roles.length).toBeGreaterThan(0);
    const after = await t.request('GET', '/v1/tenants/globex-eng/policy');
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
  });

  it('refuses bad input with pointers and hides tenants the caller cannot reach', async () => {
    const self = await t.request('POST', `/v1/tenants/${T}/promote`, { body: { to: T, reason: 'x' } });
    expect(self.status).toBe(400);
    expect(self.json.errors[0].pointer).toBe('/to');
    const bad = await t.request('POST', `/v1/tenants/${T}/promote`, { body: { to: 'Not A Tenant', reason: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].pointer).toBe('/to');
    const missing = await t.request('POST', `/v1/tenants/${T}/promote?plan=1`, { body: { to: 'no-such-tenant' } });
    expect(missing.status).toBe(404);
    const noReason = await t.request('POST', `/v1/tenants/${T}/promote`, { body: { to: 'globex-eng' } });
    expect(noReason.status).toBe(400);
    expect(noReason.json.errors[0].pointer).toBe('/reason');
    // An editor of acme only: the target is out of reach, and looks like it does not exist.
    expect((await t.request('POST', `/v1/tenants/${T}/promote?plan=1`, { body: { to: 'globex-eng' }, token: editor })).status).toBe(404);
  });

  it("copies into the target's draft, audited, and the target's review rule applies to its publish", async () => {
    const staging = await t.request('POST', '/v1/tenants', { body: { id: 'acme-prod', name: 'Acme production' } });
    expect(staging.status, staging.text).toBe(201);
    const pol = await t.request('GET', '/v1/tenants/acme-prod/policy');
    const setReview = await t.request('PUT', '/v1/tenants/acme-prod/policy', {
      body: { ...pol.json, review: { publish: 'required' } },
      headers: { 'if-match': pol.headers.get('etag')! },
    });
    expect(setReview.status, setReview.text).toBe(200);
    const r = await t.request('POST', `/v1/tenants/${T}/promote`, { body: { to: 'acme-prod', reason: 'ship staging to production' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.applied).toBe(true);
    const prod = (await t.request('GET', '/v1/tenants/acme-prod/policy')).json;
    const src = (await t.request('GET', `/v1/tenants/${T}/policy`)).json;
    expect(prod.roles).toEqual(src.roles);
    expect(prod.bindings).toEqual(src.bindings);
    expect(prod.review).toEqual({ publish: 'required', approvals: 1 });
    const grants = (await t.request('GET', '/v1/tenants/acme-prod/grants')).json;
    expect((grants.items ?? grants).map((g: { connectionId: string }) => g.connectionId).sort()).toEqual([
      'conn-knowledge-graph-prod',
      'conn-knowledge-graph-staging',
    ]);
    expect((await events('tenant')).some((e) => e.action === 'promote' && e.entityId === 'acme-prod' && e.reason === 'ship staging to production')).toBe(true);
    const publish = await t.request('POST', '/v1/tenants/acme-prod/bundles', { body: { reason: 'first production bundle' } });
    expect(publish.status).toBe(202);
    // Promoting again changes nothing more.
    const again = await t.request('POST', `/v1/tenants/${T}/promote?plan=1`, { body: { to: 'acme-prod' } });
    expect(again.json.roles).toEqual({ added: [], removed: [], changed: [] });
    expect(again.json.diff.identical).toBe(true);
  });
});

describe('POST /v1/tenants/:tenant/publish-requests', () => {
  const G = 'globex-eng';
  it('asks for a review explicitly, whatever the review rule, and refuses bad input and a request with nothing to review', async () => {
    expect((await t.request('POST', `/v1/tenants/${G}/bundles`, { body: { reason: 'baseline of globex' } })).status).toBe(201);
    const noReason = await t.request('POST', `/v1/tenants/${G}/publish-requests`, { body: {} });
    expect(noReason.status).toBe(400);
    expect(noReason.json.errors[0].pointer).toBe('/reason');
    const extra = await t.request('POST', `/v1/tenants/${G}/publish-requests`, { body: { reason: 'x', emergency: true } });
    expect(extra.status).toBe(400);
    const nothing = await t.request('POST', `/v1/tenants/${G}/publish-requests`, { body: { reason: 'same as published' } });
    expect(nothing.status).toBe(409);
    const viewer = await t.tokenFor('viewer', [G]);
    expect((await t.request('POST', `/v1/tenants/${G}/publish-requests`, { body: { reason: 'x' }, token: viewer })).status).toBe(403);

    const cur = await t.request('GET', `/v1/tenants/${G}/policy`);
    const put = await t.request('PUT', `/v1/tenants/${G}/policy`, {
      body: { ...cur.json, bundleTtlSeconds: 7200 },
      headers: { 'if-match': cur.headers.get('etag')! },
    });
    expect(put.status, put.text).toBe(200);
    const before = (await t.request('GET', `/v1/tenants/${G}/bundles`)).json.items.length;
    const asked = await t.request('POST', `/v1/tenants/${G}/publish-requests`, { body: { reason: 'please look at the shorter lifetime' } });
    expect(asked.status, asked.text).toBe(202);
    expect(asked.json).toMatchObject({ status: 'pending', tenant: G, reason: 'please look at the shorter lifetime' });
    expect((await t.request('GET', `/v1/tenants/${G}/bundles`)).json.items.length).toBe(before);
  });
});
