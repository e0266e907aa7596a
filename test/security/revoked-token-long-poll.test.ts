import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.ts';
import { hashSecret } from '../../server/auth/tokens.ts';
import { openToolgate } from '../../server/startup.ts';
import { ADMIN_TOKEN, type TestApp, startTestApp } from '../support/harness.ts';

// A long poll opened before its token was revoked still received the next bundle: the token was
// checked once, when the request arrived. It is checked again when the poll wakes, against the
// database as it is then, so a revoked token (or an ended console session) gets 401, also on a
// replica that never heard of the revocation.

const tenant = 'acme-research';
const latest = `/v1/tenants/${tenant}/bundles/latest`;
let t: TestApp;
let ttl = 3600;

beforeAll(async () => {
  t = await startTestApp();
  expect((await publishChange()).status).toBe(201);
});
afterAll(async () => t.close());

/** Changes the draft (its bundle lifetime) and publishes it: a new version with a new revision. */
async function publishChange() {
  const policy = await t.request('GET', `/v1/tenants/${tenant}/policy`);
  const { version: _v, createdAt: _c, updatedAt: _u, tenant: _t, ...body } = policy.json;
  ttl += 60;
  const put = await t.request('PUT', `/v1/tenants/${tenant}/policy`, {
    body: { ...body, bundleTtlSeconds: ttl },
    headers: { 'if-match': policy.headers.get('etag')! },
  });
  expect(put.status).toBe(200);
  return t.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'next bundle' } });
}

async function revoke(token: string) {
  const id = (await t.deps.database.db.selectFrom('tokens').select('id').where('token_hash', '=', hashSecret(token)).executeTakeFirstOrThrow()).id;
  const row = await t.request('GET', `/v1/tokens/${id}`);
  expect((await t.request('DELETE', `/v1/tokens/${id}`, { headers: { 'if-match': row.headers.get('etag')! } })).status).toBe(204);
}

/** Opens a long poll holding the current revision and resolves once the server holds it. */
async function heldPoll(app: { request: (path: string, init: RequestInit) => Response | Promise<Response> }, headers: Record<string, string>, wait = 20) {
  const current = await t.request('GET', latest);
  const etag = current.headers.get('etag')!;
  const answer = Promise.resolve(app.request(`${latest}?wait=${wait}`, { headers: { ...headers, 'if-none-match': etag } }));
  // The poll is held once the bundle cache has a waiter for the tenant.
  await new Promise((r) => setTimeout(r, 100));
  return answer;
}

describe('a long poll whose credential is revoked while it is held', () => {
  it('bearer token revoked, then a publish wakes the poll: 401, not the new bundle', async () => {
    const token = await t.tokenFor('runtime', [tenant]);
    const poll = heldPoll(t.app, { authorization: `Bearer ${token}` });
    await revoke(token);
    expect((await publishChange()).status).toBe(201);
    const res = await poll;
    expect(res.status).toBe(401);
    expect(res.headers.get('toolgate-signature')).toBeNull();
    expect(await res.text()).not.toContain('"catalog"');
  });

  it('bearer token revoked and the wait runs out: 401, not 304', async () => {
    const token = await t.tokenFor('runtime', [tenant]);
    const poll = heldPoll(t.app, { authorization: `Bearer ${token}` }, 1);
    await revoke(token);
    expect((await poll).status).toBe(401);
  });

  it('a console session whose token is revoked: 401 when the poll wakes', async () => {
    const token = await t.tokenFor('viewer', [tenant]);
    const signIn = await t.app.request('/v1/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    expect(signIn.status).toBe(200);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0];
    const poll = heldPoll(t.app, { cookie });
    await revoke(token);
    expect((await publishChange()).status).toBe(201);
    expect((await poll).status).toBe(401);
  });

  it('a token that was not revoked still gets the new bundle when the poll wakes', async () => {
    const token = await t.tokenFor('runtime', [tenant]);
    const poll = heldPoll(t.app, { authorization: `Bearer ${token}` });
    const published = await publishChange();
    const res = await poll;
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('toolgate-version'))).toBe(published.json.version);
  });

  it('an approval long poll whose token is revoked gets 401 when the decision wakes it, never the receipt', async () => {
    const token = await t.tokenFor('runtime', [tenant]);
    const editor = await t.tokenFor('editor', [tenant]);
    const approvals = `/v1/tenants/${tenant}/approvals`;
    const opened = await t.request('POST', approvals, {
      token,
      body: {
        subject: 'agent:research-bot',
        tool: 'core__send_email',
        arguments: { to: 'someone@elsewhere.example', subject: 'numbers', body: 'x' },
        reason: 'needs a person',
        bundleVersion: 1,
      },
    });
    expect(opened.status).toBe(201);
    const waiting = t.request('GET', `${approvals}/${opened.json.id}?wait=20`, { token });
    await new Promise((r) => setTimeout(r, 100));
    await revoke(token);
    expect((await t.request('POST', `${approvals}/${opened.json.id}/approve`, { token: editor, body: { reason: 'fine' } })).status).toBe(200);
    const r = await waiting;
    expect(r.status).toBe(401);
    expect(r.text).not.toContain('receipt');
  });

  it('held on another replica of the same database, which hears of no revocation: still 401', async () => {
    const token = await t.tokenFor('runtime', [tenant]);
    const { deps } = await openToolgate(
      {
        host: '127.0.0.1',
        port: 0,
        dbFile: t.dbTarget,
        keysDir: `${t.dir}/keys`,
        webDir: `${t.dir}/no-web`,
        seed: 'none',
        adminToken: ADMIN_TOKEN,
        logLevel: 'silent',
      },
      pino({ level: 'silent' }),
    );
    try {
      const replica = createApp(deps);
      // The replica authenticates the poll (and caches the token) before the revocation elsewhere.
      const poll = heldPoll(replica, { authorization: `Bearer ${token}` });
      await revoke(token);
      expect((await publishChange()).status).toBe(201);
      expect((await poll).status).toBe(401);
    } finally {
      await deps.database.close();
    }
  });
});
