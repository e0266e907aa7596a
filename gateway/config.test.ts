import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig } from './config.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-gw-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'AAAA', kid: 'k1' }] }));

const valid = () => ({
  control: { url: 'http://127.0.0.1:8787', tenant: 'acme', token: '${TG_TOKEN}', jwksFile: 'jwks.json', cacheDir: 'cache' },
  listen: { http: { port: 0 } },
  clients: [{ name: 'desk', key: '${DESK_KEY}', subject: 'agent:desk' }],
  upstreams: { github: { kind: 'stdio', command: '/usr/bin/github-mcp', env: ['GITHUB_TOKEN'] } },
});
const env = { TG_TOKEN: 'tg_runtime_secret_value', DESK_KEY: 'desk-key-secret-0123456789' };

let n = 0;
async function load(config: unknown, e: Record<string, string | undefined> = env) {
  const file = join(dir, `config-${n++}.json`);
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
  return loadGatewayConfig(file, e);
}

describe('gateway configuration', () => {
  it('resolves ${NAME} from the environment, fills the defaults and names the runtime as a gateway', async () => {
    const r = await load(valid());
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.config.control.token).toBe(env.TG_TOKEN);
    expect(r.config.listen).toMatchObject({ kind: 'http', host: '127.0.0.1', path: '/mcp' });
    expect(r.config.timeouts).toEqual({ callMs: 30000, approvalMs: 120000, relistMs: 60000 });
    expect(r.config.limits).toEqual({ sessionsPerClient: 100, pendingApprovalsPerClient: 10 });
    expect(r.config.control.runtimeId).toMatch(/^gateway:/);
    expect(r.config.control.cacheDir).toBe(join(dir, 'cache'));
    expect(r.config.clients[0].keyDigest?.length).toBe(32);
    expect(JSON.stringify(r.config.clients)).not.toContain(env.DESK_KEY);
  });

  it('names the JSON pointer of an unset variable without any value from the environment', async () => {
    const r = await load(valid(), { TG_TOKEN: env.TG_TOKEN });
    expect(r).toEqual({ ok: false, problems: [{ pointer: '/clients/0/key', message: 'names the environment variable DESK_KEY, which is not set' }] });
  });

  it('names the JSON pointer of each schema problem, never echoing a substituted secret', async () => {
    const c = valid() as any;
    c.control.url = '${TG_TOKEN}';
    c.listen.http.port = 70000;
    c.clients[0].extra = 1;
    c.upstreams.github.kind = 'ftp';
    const r = await load(c);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const pointers = r.problems.map((p) => p.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/control/url', '/listen/http/port', '/clients/0/extra', '/upstreams/github/kind']));
    expect(JSON.stringify(r.problems)).not.toContain(env.TG_TOKEN);
  });

  it('refuses a file that is not JSON, an HTTP client without a key, repeated keys and an unknown stdio client', async () => {
    expect(await load('{ not json')).toEqual({ ok: false, problems: [{ pointer: '', message: 'is not valid JSON' }] });
    const noKey = valid();
    noKey.clients.push({ name: 'other', subject: 'agent:x' } as never);
    expect((await load(noKey)) as unknown).toMatchObject({ ok: false, problems: [{ pointer: '/clients/1' }] });
    const same = valid();
    same.clients.push({ name: 'twin', key: '${DESK_KEY}', subject: 'agent:y' });
    expect((await load(same)) as unknown).toMatchObject({ ok: false, problems: [{ pointer: '/clients/1/key', message: 'is the same key as /clients/0' }] });
    const stdio = { ...valid(), listen: { stdio: { client: 'nobody' } } };
    expect((await load(stdio)) as unknown).toMatchObject({ ok: false, problems: [{ pointer: '/listen/stdio/client' }] });
    const noTrust = valid() as any;
    delete noTrust.control.jwksFile;
    expect((await load(noTrust)) as unknown).toMatchObject({ ok: false, problems: [{ pointer: '/control/jwksFile' }] });
    const leak = valid();
    leak.upstreams.github.env.push('TOOLGATE_TOKEN');
    expect((await load(leak)) as unknown).toMatchObject({ ok: false, problems: [{ pointer: '/upstreams/github/env/1' }] });
    const badJwks = valid();
    badJwks.control.jwksFile = 'missing.json';
    expect((await load(badJwks)) as unknown).toMatchObject({
      ok: false,
      problems: [{ pointer: '/control/jwksFile', message: 'cannot read the file (ENOENT)' }],
    });
  });

  it('trusts the root keys of rootKeys files (a JWK or a JWKS) instead of a fixed JWKS, and names an unreadable one', async () => {
    writeFileSync(join(dir, 'root.jwk'), JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: 'BBBB', kid: 'root-1' }));
    const byRoot = valid() as any;
    delete byRoot.control.jwksFile;
    byRoot.control.rootKeys = ['root.jwk', 'jwks.json'];
    const r = await load(byRoot);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.config.control.trust).toEqual({
      trustedRoots: [
        { kty: 'OKP', crv: 'Ed25519', x: 'BBBB', kid: 'root-1' },
        { kty: 'OKP', crv: 'Ed25519', x: 'AAAA', kid: 'k1' },
      ],
    });
    byRoot.control.rootKeys = ['root.jwk', 'no-such-root.jwk'];
    expect((await load(byRoot)) as unknown).toMatchObject({
      ok: false,
      problems: [{ pointer: '/control/rootKeys/1', message: 'cannot read the file (ENOENT)' }],
    });
    const both = valid() as any;
    both.control.rootKeys = ['root.jwk'];
    expect((await load(both)) as unknown).toMatchObject({ ok: false, problems: [{ pointer: '/control' }] });
  });

  it('refuses a mirror that is not an http(s) URL without echoing the value from the environment', async () => {
    const c = valid() as any;
    c.control.mirrors = ['${MIRROR_URL}'];
    const r = await load(c, { ...env, MIRROR_URL: 'https://s3cr3t mirror-token.example' });
    expect(r).toEqual({ ok: false, problems: [{ pointer: '/control/mirrors/0', message: 'is not an http(s) URL' }] });
  });

  it('refuses client fields that evaluate and the decision log would not accept (a group twice, a bad subject)', async () => {
    const c = valid() as any;
    c.clients[0].groups = ['support', 'support'];
    c.clients[0].subject = 'agent with spaces';
    const r = await load(c);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.pointer)).toEqual(expect.arrayContaining(['/clients/0/groups', '/clients/0/subject']));
  });

  it('takes relistMs, sessionsPerClient and pendingApprovalsPerClient, and names the pointer of a value out of range', async () => {
    const c = valid() as any;
    c.timeouts = { relistMs: 5000, approvalMs: 30000 };
    c.limits = { sessionsPerClient: 4, pendingApprovalsPerClient: 3 };
    const r = await load(c);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.config.timeouts).toEqual({ callMs: 30000, approvalMs: 30000, relistMs: 5000 });
    expect(r.config.limits).toEqual({ sessionsPerClient: 4, pendingApprovalsPerClient: 3 });
    c.timeouts = { relistMs: 10 };
    c.limits = { sessionsPerClient: 0, perAddress: 3, pendingApprovalsPerClient: 0 };
    const bad = await load(c);
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.problems.map((p) => p.pointer)).toEqual(
      expect.arrayContaining(['/timeouts/relistMs', '/limits/sessionsPerClient', '/limits/perAddress', '/limits/pendingApprovalsPerClient']),
    );
    // Past the control plane's own limit of pending requests per runtime token, the cap would cap nothing.
    c.timeouts = { relistMs: 5000 };
    c.limits = { pendingApprovalsPerClient: 101 };
    const over = await load(c);
    expect(over.ok).toBe(false);
    if (over.ok) return;
    expect(over.problems.map((p) => p.pointer)).toEqual(['/limits/pendingApprovalsPerClient']);
  });

  it('accepts a stdio listener for a client without a key, and a keySha256', async () => {
    const c = valid() as any;
    c.listen = { stdio: { client: 'desk' } };
    c.clients = [
      { name: 'desk', subject: 'agent:desk' },
      { name: 'other', keySha256: 'a'.repeat(64), subject: 'agent:o' },
    ];
    const r = await load(c);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.config.listen.kind === 'stdio' && r.config.listen.client.name).toBe('desk');
  });
});
