import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

// /metrics answered anyone; the database and WAL were world-readable; token-authenticated bundle
// pulls went out `Cache-Control: public`; reasons stored NUL and ANSI escapes verbatim.
let t: TestApp;
let open: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  open = await startTestApp({ seed: false, settings: { metricsPublic: true } });
});
afterAll(async () => {
  await t.close();
  await open.close();
});

describe('/metrics', () => {
  it('refuses a request without a token', async () => {
    const r = await t.request('GET', '/metrics', { token: null });
    expect(r.status).toBe(401);
    expect(r.text).not.toContain('toolgate_http_requests_total');
  });

  it('refuses a wrong token, and the roles that may not read it', async () => {
    expect((await t.request('GET', '/metrics', { token: 'tg_wrong_token_0123456789abcdefghijkl' })).status).toBe(401);
    for (const [role, tenants] of [
      ['viewer', ['acme-research']],
      ['editor', ['acme-research']],
      ['runtime', ['acme-research']],
    ] as const) {
      const token = await t.tokenFor(role, [...tenants]);
      expect((await t.request('GET', '/metrics', { token })).status, role).toBe(403);
    }
  });

  it('answers an admin and an auditor, never to be cached', async () => {
    const auditor = await t.tokenFor('auditor');
    for (const token of [undefined, auditor]) {
      const r = await t.request('GET', '/metrics', { token });
      expect(r.status).toBe(200);
      expect(r.text).toContain('toolgate_http_requests_total');
      expect(r.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('answers without a token when the operator sets TOOLGATE_METRICS_PUBLIC=1', async () => {
    const r = await open.request('GET', '/metrics', { token: null });
    expect(r.status).toBe(200);
  });
});

describe('database files', () => {
  it('creates the database, its WAL and shared memory readable by the owner alone', async () => {
    // A write makes sure the WAL exists.
    expect((await t.request('POST', '/v1/groups', { body: { name: 'perm-probe' } })).status).toBe(201);
    for (const f of ['toolgate.db', 'toolgate.db-wal', 'toolgate.db-shm']) {
      const mode = statSync(join(t.dir, f)).mode & 0o777;
      expect(mode.toString(8), f).toBe('600');
    }
  });
});

describe('answers that needed a token are never public in shared caches', () => {
  beforeAll(async () => {
    expect((await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'cache probe' } })).status).toBe(201);
  });

  for (const path of ['/v1/tenants/acme-research/bundles/latest', '/v1/tenants/acme-research/bundles/1', '/v1/tenants/acme-research/bundles/1/signature']) {
    it(`sends ${path} private`, async () => {
      for (const headers of [{}, { 'accept-encoding': 'gzip' }] as Record<string, string>[]) {
        const r = await t.request('GET', path, { headers });
        expect(r.status).toBe(200);
        const cache = r.headers.get('cache-control') ?? '';
        expect(cache).not.toMatch(/public/);
        expect(cache).toMatch(/private/);
        const again = await t.request('GET', path, { headers: { ...headers, 'if-none-match': r.headers.get('etag')! } });
        expect(again.headers.get('cache-control') ?? '').not.toMatch(/public/);
      }
    });
  }

  it('keeps a runtime token pull private too', async () => {
    const runtime = await t.tokenFor('runtime', ['acme-research']);
    const r = await t.request('GET', '/v1/tenants/acme-research/bundles/1', { token: runtime });
    expect(r.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
  });
});

describe('reasons with control characters', () => {
  const bad = [
    'deploy\u0000now',
    'fix \u001b[2J\u001b[Hcleared your terminal',
    'a\rforged line',
    'bell\u0007',
    'del\u007f',
    'c1 \u009b31m',
    'rtl \u202egnp.exe',
    'isolate \u2066x\u2069',
  ];
  for (const reason of bad) {
    it(`refuses ${JSON.stringify(reason)} in the body with a 400 naming /reason, storing nothing`, async () => {
      const name = `g-${Math.random().toString(36).slice(2, 8)}`;
      const r = await t.request('POST', '/v1/groups', { body: { name, reason } });
      expect(r.status).toBe(400);
      expect(r.json.errors[0].pointer).toBe('/reason');
      // NUL is refused in every string of a body before the reason check sees it.
      expect(r.json.detail).toMatch(/control character U\+[0-9A-F]{4}|NUL character \(U\+0000\)/);
      expect((await t.request('GET', `/v1/groups/${name}`)).status).toBe(404);
    });
  }

  for (const reason of ['%00', '%1B%5B31mred', 'a%0D%0AInjected: yes']) {
    it(`refuses Toolgate-Reason ${reason} (percent-encoded controls)`, async () => {
      const r = await t.request('POST', '/v1/groups', { body: { name: 'hdr' }, headers: { 'toolgate-reason': reason } });
      expect(r.status).toBe(400);
      expect(r.json.errors[0].pointer).toBe('/headers/Toolgate-Reason');
    });
  }

  it('still accepts plain text, line breaks typed in a text area and any language', async () => {
    const r = await t.request('POST', '/v1/groups', { body: { name: 'ok-reason', reason: 'Ticket 42:\n\tadd the group — für Anaïs, 日本' } });
    expect(r.status).toBe(201);
  });
});
