import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { etag } from './support.ts';

// RFC 3339 (and so ajv's date-time format) allows a leap second, 23:59:60, which JavaScript dates
// cannot hold: a token with expiresAt "2030-12-31T23:59:60Z" passed the schema and then failed
// turning it into a Date (a 500). Every date-time the schemas accept is now one the server can hold.

const LEAP = '2030-12-31T23:59:60Z';
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('a leap second is refused with its pointer wherever an instant is taken', () => {
  it('token expiry', async () => {
    const r = await t.request('POST', '/v1/tokens', { body: { label: 'leap', role: 'viewer', tenants: ['acme-research'], expiresAt: LEAP } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/expiresAt' })]);
  });

  it('grant expiry', async () => {
    const list = (await t.request('GET', '/v1/tenants/acme-research/grants')).json;
    const grant = (list.items ?? list)[0];
    const path = `/v1/tenants/acme-research/grants/${grant.connectionId}`;
    const current = (await t.request('GET', path)).json;
    const r = await t.request('PUT', path, { headers: { 'if-match': await etag(t, path) }, body: { ...current, expiresAt: LEAP } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/expiresAt' })]);
  });

  it('simulate as of an instant', async () => {
    const r = await t.request('POST', '/v1/tenants/acme-research/simulate', { body: { subject: 'agent:research-bot', at: LEAP } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/at' })]);
  });

  it('a policy test request', async () => {
    const path = '/v1/tenants/acme-research/tests';
    const r = await t.request('PUT', path, {
      headers: { 'if-match': await etag(t, path) },
      body: { tests: [{ name: 'leap', request: { subject: 'agent:research-bot', at: LEAP }, expect: { rejected: false } }] },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/tests/0/request/at' })]);
  });

  it('audit and decision queries', async () => {
    for (const path of [`/v1/audit?from=${LEAP}`, `/v1/tenants/acme-research/decisions?from=${LEAP}`]) {
      const r = await t.request('GET', path);
      expect(r.status, path).toBe(400);
      expect(r.json.errors[0].pointer).toBe('/from');
    }
  });

  it('still takes the last ordinary second and any offset', async () => {
    const r = await t.request('POST', '/v1/tokens', {
      body: { label: 'last second', role: 'viewer', tenants: ['acme-research'], expiresAt: '2030-12-31T23:59:59+14:00' },
    });
    expect(r.status).toBe(201);
    expect(r.json.expiresAt).toBe('2030-12-31T09:59:59.000Z');
  });
});
