import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import { killProcessGroup, serveEnv, waitUntilHealthy } from '../support/spawned-server.ts';

// DESIGN "Files and exposure", checked against the process an operator runs (`toolgate serve`),
// not an app served by a test helper: a faster listener path in front of the app (a 304 answered
// early, a cached bundle written straight to the socket) must keep every one of these promises.
const ADMIN = 'tg_exposure_serve_admin_0123456789abcdef';
const MAIN = fileURLToPath(new URL('../../server/cli/main.ts', import.meta.url));
let child: ChildProcess | undefined;
let dir = '';
let base = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-exposure-'));
  const port = await freePort();
  child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), MAIN, 'serve'], {
    detached: true,
    env: serveEnv({ port, dir, adminToken: ADMIN, seed: 'demo', extra: { TOOLGATE_METRICS_PUBLIC: '' } }),
    stdio: 'ignore',
  });
  base = `http://127.0.0.1:${port}`;
  await waitUntilHealthy(base, child, 90_000);
}, 120_000);

afterAll(() => {
  killProcessGroup(child);
  rmSync(dir, { recursive: true, force: true });
});

const as = (token: string) => ({ authorization: `Bearer ${token}` });

async function mint(role: string, tenants?: string[]): Promise<string> {
  const r = await fetch(`${base}/v1/tokens`, {
    method: 'POST',
    headers: { ...as(ADMIN), 'content-type': 'application/json' },
    body: JSON.stringify({ label: `${role} probe`, role, ...(tenants ? { tenants } : {}) }),
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { token: string }).token;
}

describe('toolgate serve, as a client on the wire sees it', () => {
  it('creates the database, its WAL and shared memory readable by the owner alone', () => {
    for (const f of ['toolgate.db', 'toolgate.db-wal', 'toolgate.db-shm']) expect((statSync(join(dir, f)).mode & 0o777).toString(8), f).toBe('600');
  });

  it('answers /metrics only to an admin or auditor token', async () => {
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const viewer = await mint('viewer', ['acme-research']);
    expect((await fetch(`${base}/metrics`, { headers: as(viewer) })).status).toBe(403);
    const ok = await fetch(`${base}/metrics`, { headers: as(await mint('auditor')) });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('# HELP');
  });

  it('never lets a shared cache keep a bundle pulled with a token, in full or as a 304, plain or gzip', async () => {
    const published = await fetch(`${base}/v1/tenants/acme-research/bundles`, {
      method: 'POST',
      headers: { ...as(ADMIN), 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'exposure probe' }),
    });
    expect([200, 201]).toContain(published.status);
    const { version } = (await published.json()) as { version: number };
    const runtime = await mint('runtime', ['acme-research']);
    for (const path of ['latest', String(version), `${version}/signature`]) {
      for (const encoding of ['identity', 'gzip']) {
        const url = `${base}/v1/tenants/acme-research/bundles/${path}`;
        const full = await fetch(url, { headers: { ...as(runtime), 'accept-encoding': encoding } });
        expect(full.status, path).toBe(200);
        await full.arrayBuffer();
        expect(full.headers.get('cache-control') ?? '', path).not.toMatch(/public/i);
        expect(full.headers.get('cache-control') ?? '', path).toMatch(/private|no-store/i);
        const etag = full.headers.get('etag');
        if (!etag) continue;
        const again = await fetch(url, { headers: { ...as(runtime), 'accept-encoding': encoding, 'if-none-match': etag } });
        await again.arrayBuffer();
        // Bundles answer 304 to their ETag (DESIGN); the signature alone may answer in full.
        if (!path.endsWith('/signature')) expect(again.status, `${path} conditional`).toBe(304);
        expect(again.headers.get('cache-control') ?? '', `${path} conditional`).not.toMatch(/public/i);
      }
    }
  });

  it('refuses a pull without a token or with a wrong one, and never serves the bundle to it', async () => {
    for (const headers of [{}, as('tg_not_a_token_0123456789abcdef0123')] as Record<string, string>[]) {
      const r = await fetch(`${base}/v1/tenants/acme-research/bundles/latest`, { headers });
      expect(r.status).toBe(401);
      expect(await r.text()).not.toContain('toolgate.bundle/v1');
    }
  });

  it('closes the connection after a 413 or 401 sent before the body was read, and the next request succeeds', async () => {
    const big = await fetch(`${base}/v1/groups`, {
      method: 'POST',
      headers: { ...as(ADMIN), 'content-type': 'application/json' },
      body: 'x'.repeat(2 * 1024 * 1024),
    });
    expect(big.status).toBe(413);
    expect(big.headers.get('connection')).toBe('close');
    await big.arrayBuffer();
    const anonymous = await fetch(`${base}/v1/groups`, {
      method: 'POST',
      headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'g', description: 'd'.repeat(300 * 1024) }),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('connection')).toBe('close');
    await anonymous.arrayBuffer();
    const next = await fetch(`${base}/v1/groups`, { headers: as(ADMIN) });
    expect(next.status).toBe(200);
  });
});
