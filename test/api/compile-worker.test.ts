import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyBundle } from '../../runtime/verify-bundle.ts';
import { Compiler } from '../../server/compiler/compiler.ts';
import { type CompiledDraft, envelope } from '../../server/compiler/draft.ts';
import { loadDraftSnapshot } from '../../server/store/snapshot.ts';
import { benchSnapshot, benchTools } from '../engine/bench-tenant.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// A large draft is compiled in the server's compile worker thread, so the server goes on answering
// requests meanwhile. These tests make every draft "large" (compileWorkerMinTools: 0) and show that
// the worker's bundle is byte for byte the inline one, that a worker that dies fails its request
// with a clear 503 and is replaced, and that two servers in one process share no compiled draft.

const tenant = 'acme-research';
let worker: TestApp;
let inline: TestApp;
beforeAll(async () => {
  [worker, inline] = await Promise.all([startTestApp({ settings: { compileWorkerMinTools: 0 } }), startTestApp()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([worker?.close(), inline?.close()]);
});

/** Changes a tenant's draft (a new binding), so its next publish has new content. */
async function editDraft(t: TestApp, subject: string): Promise<void> {
  const pol = await t.request('GET', `/v1/tenants/${tenant}/policy`);
  const { version: _v, createdAt: _c, updatedAt: _u, tenant: _t, ...policy } = pol.json;
  policy.bindings = { ...policy.bindings, [subject]: ['researcher'] };
  const r = await t.request('PUT', `/v1/tenants/${tenant}/policy`, { body: policy, headers: { 'if-match': pol.headers.get('etag')! } });
  expect(r.status).toBe(200);
}

const fixedEnvelope = { version: 7, previousRevision: null, issuedAt: '2026-01-02T03:04:05.000Z' };

describe('the compile worker', () => {
  it('a killed worker fails the request it held with a 503 that says so, and the next request starts a new one', async () => {
    const compiler = worker.deps.compiler;
    expect(compiler.worker).toBeNull();
    const simulating = worker.request('POST', `/v1/tenants/${tenant}/simulate`, { body: { subject: 'agent:research-bot' } });
    // The request is handed to the worker (started for it); the worker dies before it answers.
    await vi.waitFor(() => expect(compiler.worker).not.toBeNull(), { interval: 1, timeout: 10_000 });
    await compiler.worker!.terminate();
    const failed = await simulating;
    expect(failed.status).toBe(503);
    expect(failed.json.detail).toMatch(/compiler stopped .* restarted; send the request again/);
    expect(failed.headers.get('retry-after')).toBe('1');

    const again = await worker.request('POST', `/v1/tenants/${tenant}/simulate`, { body: { subject: 'agent:research-bot' } });
    expect(again.status).toBe(200);
    expect(again.json.roles).toContain('researcher');
    expect(compiler.workersStarted).toBe(2);

    // A worker that had started well and dies idle is replaced at once, before any request needs it.
    const idle = compiler.worker!;
    await idle.terminate();
    await vi.waitFor(() => expect(compiler.workersStarted).toBe(3), { timeout: 10_000 });
    expect(compiler.worker).not.toBeNull();
    expect(compiler.worker).not.toBe(idle);
    expect((await worker.request('POST', `/v1/tenants/${tenant}/simulate`, { body: { subject: 'agent:research-bot' } })).status).toBe(200);
  }, 60_000);

  it('compiles a draft to exactly the bytes the inline compile makes', async () => {
    const snapshot = (await loadDraftSnapshot(worker.deps.database.db, tenant))!;
    const inThread = new Compiler({ workerMinTools: Number.POSITIVE_INFINITY, logger: worker.deps.logger });
    const fromWorker = await worker.deps.compiler.compileSnapshot(snapshot);
    const fromThread = await inThread.compileSnapshot(snapshot);
    expect(worker.deps.compiler.worker).not.toBeNull();
    expect(inThread.worker).toBeNull();
    expect(fromWorker.revision).toBe(fromThread.revision);
    expect(envelope(fromWorker, fixedEnvelope).text).toBe(envelope(fromThread, fixedEnvelope).text);
  }, 60_000);

  it('a publish through the worker signs the bundle an inline compile makes, tests and summary included', async () => {
    await editDraft(worker, 'agent:worker-publish');
    await editDraft(inline, 'agent:worker-publish');
    const tests = [
      {
        name: 'research bot queries knowledge',
        request: { subject: 'agent:research-bot', groups: ['knowledge'] },
        expect: { visible: ['core__knowledge-query'] },
      },
    ];
    for (const t of [worker, inline]) {
      const cur = await t.request('GET', `/v1/tenants/${tenant}/tests`);
      expect((await t.request('PUT', `/v1/tenants/${tenant}/tests`, { body: { tests }, headers: { 'if-match': cur.headers.get('etag')! } })).status).toBe(200);
    }
    const published = await worker.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'through the worker' } });
    expect(published.status).toBe(201);
    const pulled = await worker.request('GET', `/v1/tenants/${tenant}/bundles/latest`, { headers: { 'accept-encoding': 'identity' } });
    const jwks = (await worker.request('GET', '/.well-known/jwks.json')).json;
    const verified = await verifyBundle(Buffer.from(pulled.text, 'utf8'), pulled.headers.get('toolgate-signature')!, { trustedKeys: jwks, tenant });
    expect(verified.ok).toBe(true);

    // The other server compiles the same draft inline: under the same envelope, the same bytes.
    const served = JSON.parse(pulled.text);
    const inlineDraft: CompiledDraft = await inline.deps.compiler.compileDraft(inline.deps.database.db, tenant);
    const same = envelope(inlineDraft, { version: served.version, previousRevision: served.previousRevision, issuedAt: served.issuedAt });
    expect(pulled.text).toBe(same.text);

    // The summary the worker computed is the one the inline server lists for the same publish.
    const inlinePublished = await inline.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'inline' } });
    expect(inlinePublished.status).toBe(201);
    const [viaWorker] = (await worker.request('GET', `/v1/tenants/${tenant}/bundles`)).json.items;
    const [viaInline] = (await inline.request('GET', `/v1/tenants/${tenant}/bundles`)).json.items;
    expect(viaWorker.summary).toEqual(viaInline.summary);
    expect(viaWorker.summary.changes.toolsAdded + viaWorker.summary.changes.decisionsChanged).toBeGreaterThanOrEqual(0);
  }, 60_000);

  it('runs the policy tests of the tests gate in the worker: a failing test refuses the publish', async () => {
    const cur = await worker.request('GET', `/v1/tenants/${tenant}/tests`);
    const tests = [
      {
        name: 'knowledge is hidden',
        request: { subject: 'agent:research-bot', groups: ['knowledge'] },
        expect: { hidden: { 'core__knowledge-query': 'any' } },
      },
    ];
    expect((await worker.request('PUT', `/v1/tenants/${tenant}/tests`, { body: { tests }, headers: { 'if-match': cur.headers.get('etag')! } })).status).toBe(
      200,
    );
    await editDraft(worker, 'agent:fails-its-test');
    const refused = await worker.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'fails' } });
    expect(refused.status).toBe(422);
    expect(refused.json.code).toBe('tests_failed');
    expect(refused.json.errors[0].pointer).toMatch(/^\/tests\/0/);
  }, 60_000);

  it('answers a draft that does not compile with every error and its pointer, and an unknown tenant with a 404', async () => {
    const r = await worker.request('POST', `/v1/tenants/${tenant}/simulate`, {
      body: { subject: 'agent:research-bot', policy: { bindings: { 'agent:research-bot': ['ghost'] } } },
    });
    expect(r.status).toBe(422);
    expect(r.json.code).toBe('compile_error');
    expect(r.json.errors.some((e: { pointer: string }) => e.pointer.startsWith('/policy/bindings'))).toBe(true);
    const impact = await worker.request('POST', `/v1/tenants/${tenant}/impact`, { body: { policy: { bindings: { 'agent:x': ['ghost'] } } } });
    expect(impact.status).toBe(422);
    expect(impact.json.code).toBe('compile_error');
    const unknown = await worker.request('POST', '/v1/tenants/no-such-tenant/simulate', { body: { subject: 'agent:research-bot' } });
    expect(unknown.status).toBe(404);
    // The worker is still there and answering.
    expect((await worker.request('POST', `/v1/tenants/${tenant}/simulate`, { body: { subject: 'agent:research-bot' } })).status).toBe(200);
  }, 60_000);

  it('the overview compares the draft with the published bundle through the worker, naming the parts that differ', async () => {
    expect((await worker.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'before the overview', force: true } })).status).toBeLessThan(300);
    const quiet = (await worker.request('GET', '/v1/overview')).json.tenants.find((x: { id: string }) => x.id === tenant);
    expect(quiet.draft).toMatchObject({ differs: false, changes: [] });
    await editDraft(worker, 'agent:overview-change');
    const changed = (await worker.request('GET', '/v1/overview')).json.tenants.find((x: { id: string }) => x.id === tenant);
    expect(changed.draft).toMatchObject({ differs: true, changes: ['policy'] });
  }, 60_000);

  it('answers other requests while a large draft compiles', async () => {
    const compiler = worker.deps.compiler;
    const snapshot = benchSnapshot(0, benchTools({ distinct: true }));
    const order: string[] = [];
    const compiling = compiler.compiledOrErrors(snapshot).then((r) => {
      order.push('compiled');
      return r;
    });
    const health = await worker.request('GET', '/healthz', { token: null });
    order.push('healthz');
    expect(health.status).toBe(200);
    const compiled = await compiling;
    expect('errors' in compiled).toBe(false);
    // The health check, asked once the compile had started, was answered before it ended.
    expect(order).toEqual(['healthz', 'compiled']);
  }, 120_000);
});

describe('two servers in one process', () => {
  it('share no compiled draft: each compiles its own', async () => {
    expect(worker.deps.compiler).not.toBe(inline.deps.compiler);
    expect(worker.deps.overview).not.toBe(inline.deps.overview);
    const a = await startTestApp();
    const b = await startTestApp();
    try {
      // The same seed, so the same draft (the same snapshot hash) in both.
      expect((await a.request('POST', `/v1/tenants/${tenant}/simulate`, { body: { subject: 'agent:research-bot' } })).status).toBe(200);
      expect(a.deps.compiler.compilesSoFar).toBe(1);
      expect(b.deps.compiler.compilesSoFar).toBe(0);
      expect((await b.request('POST', `/v1/tenants/${tenant}/simulate`, { body: { subject: 'agent:research-bot' } })).status).toBe(200);
      expect(b.deps.compiler.compilesSoFar).toBe(1);
      // Each server's own draft again: from its own cache.
      expect((await a.request('POST', `/v1/tenants/${tenant}/simulate`, { body: { subject: 'agent:research-bot' } })).status).toBe(200);
      expect(a.deps.compiler.compilesSoFar).toBe(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);
});
