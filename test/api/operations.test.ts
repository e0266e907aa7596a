import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.ts';
import { ToolgateDatabase, databaseUnavailable } from '../../server/db/database.ts';
import { freePort } from '../support/free-port.ts';
import { ADMIN_TOKEN, type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('operations', () => {
  it('answers /healthz without a token', async () => {
    const r = await t.request('GET', '/healthz', { token: null });
    expect(r.json).toEqual({ ok: true });
  });

  it('echoes a sane request id and makes one up otherwise', async () => {
    expect((await t.request('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } })).headers.get('x-request-id')).toBe('abc-123');
    const made = (await t.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } })).headers.get('x-request-id');
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('puts the request id in every problem', async () => {
    const r = await t.request('GET', '/v1/tools/core__nope', { headers: { 'x-request-id': 'trace-me' } });
    expect(r.json).toMatchObject({ status: 404, code: 'not_found', requestId: 'trace-me', type: 'https://toolgate.dev/problems/not_found' });
  });

  it('exports Prometheus metrics: requests by route and status, latency, audit events', async () => {
    await t.request('GET', '/v1/tools');
    await t.request('POST', '/v1/groups', { body: { name: 'metrics-probe' } });
    const r = await t.request('GET', '/metrics');
    expect(r.text).toMatch(/toolgate_http_requests_total\{method="GET",route="\/v1\/tools",status="200"\} [1-9]/);
    expect(r.text).toContain('toolgate_http_request_duration_seconds_bucket');
    expect(r.text).toMatch(/toolgate_audit_events_written_total\{action="create"\} [1-9]/);
  });

  it('serves an OpenAPI 3.1 document generated from the schemas', async () => {
    const r = await t.request('GET', '/v1/openapi.json', { token: null });
    expect(r.json.openapi).toBe('3.1.0');
    expect(r.json.paths['/v1/tools/{id}'].put.requestBody.content['application/json'].schema.$ref).toBe('https://toolgate.dev/schemas/tool.schema.json');
    expect(r.json.components.schemas.tool.$id).toBe('https://toolgate.dev/schemas/tool.schema.json');
    expect(Object.keys(r.json.paths)).toEqual(expect.arrayContaining(['/v1/tenants/{tenant}/simulate', '/v1/audit/export', '/.well-known/jwks.json']));
  });

  it('answers an unknown API route with a problem, not HTML', async () => {
    const r = await t.request('GET', '/v1/nothing-here');
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('OpenAPI statuses', () => {
  it('documents the status each route really answers', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json', { token: null })).json;
    expect(Object.keys(doc.paths['/v1/tenants/{tenant}/simulate'].post.responses)).toContain('200');
    expect(Object.keys(doc.paths['/v1/tools'].post.responses)).toContain('201');
    expect(Object.keys(doc.paths['/v1/tenants/{tenant}/runtimes/status'].post.responses)).toContain('204');
    const sim = await t.request('POST', '/v1/tenants/acme-research/simulate', { body: { subject: 'agent:research-bot' } });
    expect(sim.status).toBe(200);
  });
});

describe('when the database cannot be reached', () => {
  it('answers 503 with Retry-After, not a 500, and recognises an unreachable server only', async () => {
    // A PostgreSQL URL whose port nobody listens on: the first query cannot connect.
    const gone = new ToolgateDatabase(`postgres://toolgate@127.0.0.1:${await freePort()}/toolgate`);
    try {
      const app = createApp({ ...t.deps, database: gone });
      const res = await app.request('/v1/tools', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(((await res.json()) as { detail: string }).detail).toMatch(/database cannot be reached/);
      const refused = await gone.db
        .selectFrom('tools')
        .selectAll()
        .execute()
        .catch((e: unknown) => e);
      expect(databaseUnavailable(refused)).toBe(true);
    } finally {
      await gone.close();
    }
    // A statement the database refuses is the request's fault or a bug, never "unavailable".
    const bad = await t.deps.database.db
      .insertInto('states')
      .values({ name: 'dup', body: '{}', version: 1, created_at: 'x', updated_at: 'x' })
      .execute()
      .then(() => t.deps.database.db.insertInto('states').values({ name: 'dup', body: '{}', version: 1, created_at: 'x', updated_at: 'x' }).execute())
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Error);
    expect(databaseUnavailable(bad)).toBe(false);
  });
});
