import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../server/app.ts';
import { type Settings, openToolgate } from '../../server/startup.ts';
import { ADMIN_TOKEN, type TestApp, startTestApp } from '../support/harness.ts';

// A console session made with a token used to outlive the token: a new TOOLGATE_ADMIN_TOKEN left
// the old one's sessions working, and nothing ever ended an active session.
const OLD = 'tg_old_bootstrap_secret_0123456789abcdef';
const NEW = 'tg_new_bootstrap_secret_fedcba9876543210';

async function open(dir: string, adminToken: string) {
  const settings: Settings = {
    host: '127.0.0.1',
    port: 0,
    dbFile: join(dir, 'toolgate.db'),
    keysDir: join(dir, 'keys'),
    webDir: join(dir, 'web'),
    seed: 'none',
    adminToken,
    logLevel: 'silent',
  };
  const { deps } = await openToolgate(settings, pino({ level: 'silent' }));
  const app = createApp(deps);
  const call = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
    const res = await app.request(path, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, json: (await res.json().catch(() => undefined)) as any, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] };
  };
  return { deps, call, close: () => deps.database.close() };
}

describe('a new TOOLGATE_ADMIN_TOKEN', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-rotation-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ends every session of the old token, refuses the old secret, and is audited as a rotation', async () => {
    const first = await open(dir, OLD);
    const oldSession = await first.call('POST', '/v1/session', {}, { token: OLD });
    const secondSession = await first.call('POST', '/v1/session', {}, { token: OLD });
    // Another admin's session is not the old token's, and survives.
    const other = await first.call('POST', '/v1/tokens', { authorization: `Bearer ${OLD}` }, { label: 'second admin', role: 'admin' });
    const otherSession = await first.call('POST', '/v1/session', {}, { token: other.json.token });
    for (const s of [oldSession, secondSession, otherSession]) expect((await first.call('GET', '/v1/tools', { cookie: s.cookie })).status).toBe(200);
    await first.close();

    const second = await open(dir, NEW);
    try {
      expect((await second.call('GET', '/v1/tools', { cookie: oldSession.cookie })).status).toBe(401);
      expect((await second.call('GET', '/v1/tools', { cookie: secondSession.cookie })).status).toBe(401);
      // The stolen cookie can no longer mint a permanent token.
      const mint = await second.call(
        'POST',
        '/v1/tokens',
        { cookie: oldSession.cookie, 'x-csrf-token': oldSession.json.csrfToken },
        { label: 'backdoor', role: 'admin' },
      );
      expect(mint.status).toBe(401);
      expect((await second.call('GET', '/v1/tools', { authorization: `Bearer ${OLD}` })).status).toBe(401);
      expect((await second.call('GET', '/v1/tools', { authorization: `Bearer ${NEW}` })).status).toBe(200);
      expect((await second.call('GET', '/v1/tools', { cookie: otherSession.cookie })).status).toBe(200);
      const audit = await second.call('GET', '/v1/audit?entityType=token&limit=100', { authorization: `Bearer ${NEW}` });
      const rotation = audit.json.items.filter((e: any) => e.action === 'rotate' && e.entityId === 'bootstrap-admin');
      expect(rotation).toHaveLength(1);
      expect(rotation[0]).toMatchObject({ actor: 'system', reason: expect.stringContaining('2 console session(s) of the old token ended') });
      expect(JSON.stringify(audit.json)).not.toContain(NEW);
      expect(JSON.stringify(audit.json)).not.toContain(OLD);
    } finally {
      await second.close();
    }
  });

  it('writes no event when restarted with the same token', async () => {
    const again = await open(dir, NEW);
    try {
      const audit = await again.call('GET', '/v1/audit?entityType=token&limit=100', { authorization: `Bearer ${NEW}` });
      expect(audit.json.items.filter((e: any) => e.entityId === 'bootstrap-admin').map((e: any) => e.action)).toEqual(['create', 'rotate']);
    } finally {
      await again.close();
    }
  });
});

describe('revoking a token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ seed: false });
  });
  afterAll(async () => t.close());

  it('ends its console sessions and its bearer use at once', async () => {
    const created = await t.request('POST', '/v1/tokens', { body: { label: 'soon gone', role: 'auditor' } });
    const login = await t.request('POST', '/v1/session', { token: null, body: { token: created.json.token } });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    expect((await t.request('GET', '/v1/audit', { token: null, headers: { cookie } })).status).toBe(200);
    expect((await t.request('GET', '/v1/audit', { token: created.json.token })).status).toBe(200);
    expect((await t.request('DELETE', `/v1/tokens/${created.json.id}`, { headers: { 'if-match': '"1"' } })).status).toBe(204);
    expect((await t.request('GET', '/v1/audit', { token: null, headers: { cookie } })).status).toBe(401);
    expect((await t.request('GET', '/v1/audit', { token: created.json.token })).status).toBe(401);
  });
});

describe('session lifetimes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ seed: false, settings: { sessionIdleSeconds: 600, sessionMaxSeconds: 3600 } });
  });
  afterAll(async () => t.close());
  afterEach(() => vi.useRealTimers());

  const start = new Date('2030-01-01T00:00:00Z').getTime();
  const at = (minutes: number) => vi.setSystemTime(start + minutes * 60_000);
  async function signIn(): Promise<string> {
    const r = await t.request('POST', '/v1/session', { token: null, body: { token: ADMIN_TOKEN } });
    expect(r.status).toBe(200);
    return (r.headers.get('set-cookie') ?? '').split(';')[0];
  }
  const use = async (cookie: string) => (await t.request('GET', '/v1/groups', { token: null, headers: { cookie } })).status;

  it('ends a session left idle longer than the idle time', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    at(0);
    const cookie = await signIn();
    at(9);
    expect(await use(cookie)).toBe(200);
    at(9 + 11);
    expect(await use(cookie)).toBe(401);
    // Ended for good, not just until the next request.
    at(9 + 11 + 1);
    expect(await use(cookie)).toBe(401);
  });

  it('keeps a session in use alive past the first idle deadline', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    at(0);
    const cookie = await signIn();
    for (const m of [8, 16, 24, 32]) {
      at(m);
      expect(await use(cookie), `minute ${m}`).toBe(200);
    }
  });

  it('ends a session at its absolute lifetime however busy it is', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    at(0);
    const cookie = await signIn();
    for (let m = 5; m < 60; m += 5) {
      at(m);
      expect(await use(cookie), `minute ${m}`).toBe(200);
    }
    at(60);
    expect(await use(cookie)).toBe(401);
  });
});
