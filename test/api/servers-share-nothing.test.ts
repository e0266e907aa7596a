import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditVerification } from '../../policy-schemas/types.gen.ts';
import { takeCheckpoint } from '../../server/audit/checkpoints.ts';
import type { PublishedEvent } from '../../server/distribution/publish-events.ts';
import { ADMIN_TOKEN, type TestApp, startTestApp } from '../support/harness.ts';

// The application context is built once per server at start and owns what its handlers use: two
// servers in one process (as tests and embedders run them) share none of it, so one server's load
// or state never reaches the other.

const tenant = 'acme-research';
let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  [a, b] = await Promise.all([startTestApp(), startTestApp()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe('two servers in one process', () => {
  it('are built with contexts of their own', () => {
    expect(a.deps).not.toBe(b.deps);
    expect(a.deps.impactSlots).not.toBe(b.deps.impactSlots);
    expect(a.deps.publishEvents).not.toBe(b.deps.publishEvents);
    expect(a.deps.bundles).not.toBe(b.deps.bundles);
    expect(a.deps.database).not.toBe(b.deps.database);
    for (const part of ['keys', 'tokens', 'failureLimiter', 'signInStarts', 'statusReports', 'runtimeOwners', 'approvalEvents', 'cluster'] as const) {
      expect(a.deps[part], part).not.toBe(b.deps[part]);
    }
  });

  it('each runs its own impact analyses: one server full of them refuses (429) while the other answers', async () => {
    const held = Array.from({ length: a.deps.impactSlots.max }, () => a.deps.impactSlots.take());
    expect(held.every((release) => release !== null)).toBe(true);
    try {
      const refused = await a.request('POST', `/v1/tenants/${tenant}/impact`, { body: {} });
      expect(refused.status).toBe(429);
      expect(refused.json.code).toBe('rate_limited');
      const answered = await b.request('POST', `/v1/tenants/${tenant}/impact`, { body: {} });
      expect(answered.status).toBe(200);
      expect(answered.json).toMatchObject({ truncated: false });
    } finally {
      for (const release of held) release?.();
    }
    expect((await a.request('POST', `/v1/tenants/${tenant}/impact`, { body: {} })).status).toBe(200);
  });

  it("a publish on one is announced to its own cache and listeners only, and is not seen on the other's bundle route", async () => {
    const heardOnA: number[] = [];
    const heardOnB: number[] = [];
    const onA = (e: PublishedEvent) => heardOnA.push(e.version);
    const onB = (e: PublishedEvent) => heardOnB.push(e.version);
    a.deps.publishEvents.on('published', onA);
    b.deps.publishEvents.on('published', onB);
    const published = await a.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'only on a' } });
    expect(published.status).toBe(201);
    expect((await a.request('GET', `/v1/tenants/${tenant}/bundles/latest`)).status).toBe(200);
    expect((await b.request('GET', `/v1/tenants/${tenant}/bundles/latest`)).status).toBe(404);
    a.deps.publishEvents.off('published', onA);
    b.deps.publishEvents.off('published', onB);
    expect(heardOnA).toEqual([published.json.version]);
    expect(heardOnB).toEqual([]);
    expect(a.deps.bundles.fresh(tenant)?.version).toBe(published.json.version);
    expect(b.deps.bundles.fresh(tenant)).toBeUndefined();
  });

  it('an approval decided on one does not wake a long poll on the other, even for a request of the same id (a copy of the database)', async () => {
    const runtime = await a.tokenFor('runtime', [tenant]);
    const opened = await a.request('POST', `/v1/tenants/${tenant}/approvals`, {
      token: runtime,
      body: { subject: 'agent:research-bot', tool: 'core__send_email', arguments: { to: 'x@elsewhere.example' }, reason: 'outside mail', bundleVersion: 3 },
    });
    expect(opened.status, opened.text).toBe(201);
    const id = opened.json.id as string;
    // The second server runs on a copy of the first one's database: the same request, pending there too.
    const row = await a.deps.database.db.selectFrom('approval_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    await b.deps.database.db.insertInto('approval_requests').values(row).execute();

    // The same long poll on each server; the first server's answers when its decision wakes it.
    const poll = (app: TestApp, signal?: AbortSignal) =>
      Promise.resolve(app.app.request(`/v1/tenants/${tenant}/approvals/${id}?wait=30`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal })).then(
        async (res) => ({ status: res.status, json: (await res.json()) as { state: string } }),
      );
    const stop = new AbortController();
    let answeredOnB = false;
    const onB = poll(b, stop.signal).then((r) => {
      answeredOnB = true;
      return r;
    });
    const onA = poll(a);
    await new Promise((r) => setTimeout(r, 50));
    const decided = await a.request('POST', `/v1/tenants/${tenant}/approvals/${id}/approve`, { body: { reason: 'fine on a' } });
    expect(decided.status, decided.text).toBe(200);
    expect(await onA).toMatchObject({ status: 200, json: { state: 'approved' } });
    // Woken by the same decision, the second server's poll would have answered alongside (its copy still pending).
    await new Promise((r) => setTimeout(r, 50));
    expect(answeredOnB).toBe(false);
    stop.abort();
    expect(await onB).toMatchObject({ status: 200, json: { state: 'pending' } });
  });

  it("a checkpoint signed with one server's key is not taken as verified by the other, whose key set never held that key", async () => {
    const signed = await takeCheckpoint(a.deps.database, a.deps.keys);
    expect(signed).not.toBeNull();
    const onA = (await a.request('GET', '/v1/audit/verify')).json as AuditVerification;
    expect(onA).toMatchObject({ ok: true, checkpoints: { verified: 1, unverified: 0 } });
    // Someone who can write the second server's database adds the first one's checkpoint.
    await b.deps.database.db
      .insertInto('audit_checkpoints')
      .values({ seq: signed!.seq, hash: signed!.hash, at: signed!.at, kid: signed!.signature.slice(0, 8), signature: signed!.signature })
      .execute();
    const onB = (await b.request('GET', '/v1/audit/verify')).json as AuditVerification;
    expect(onB).toMatchObject({ ok: true, checkpoints: { verified: 0, unverified: 1 } });
  });

  it('a key rotated on one is published by that one only (each reads its own keys directory)', async () => {
    const etag = (await a.request('GET', '/v1/keys')).headers.get('etag')!;
    const rotated = await a.request('POST', '/v1/keys/rotate', { body: { reason: 'only on a' }, headers: { 'if-match': etag } });
    expect(rotated.status, rotated.text).toBe(201);
    const kid = rotated.json.kid as string;
    const kids = async (app: TestApp) =>
      ((await app.request('GET', '/.well-known/jwks.json', { token: null })).json.keys as { kid: string }[]).map((k) => k.kid);
    expect(await kids(a)).toContain(kid);
    expect(await kids(b)).not.toContain(kid);
  });

  // Last: it leaves the first server refusing this test client for a minute.
  it('an address locked out (429) on one, after too many unknown tokens, is still answered by the other', async () => {
    let last = 0;
    for (let i = 0; i < 30 && last !== 429; i++) last = (await a.request('GET', '/v1/tenants', { token: 'tg_not_a_real_token_000000000000' })).status;
    expect(last).toBe(429);
    expect((await a.request('GET', '/v1/tenants')).status).toBe(429);
    expect((await b.request('GET', '/v1/tenants', { token: 'tg_not_a_real_token_000000000000' })).status).toBe(401);
    expect((await b.request('GET', '/v1/tenants')).status).toBe(200);
  });
});
