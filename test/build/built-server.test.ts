import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import { killProcessGroup, serveEnv, waitUntilHealthy } from '../support/spawned-server.ts';
import { ensureServerBuilt, ROOT } from './ensure-built.ts';

// Production runs plain `node` on the build output: no tsx, no Vite, no esbuild at run time.
const ADMIN = 'tg_built_server_admin_0123456789abcd';
let child: ChildProcess | undefined;
let dir = '';

beforeAll(async () => {
  await ensureServerBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-built-'));
}, 120_000);

afterAll(() => {
  killProcessGroup(child);
  rmSync(dir, { recursive: true, force: true });
});

describe('the built server', () => {
  it('serves the API from dist/ with plain node and no build tool inside', async () => {
    const port = await freePort();
    // Nothing a build tool brings is inside the output the server runs.
    const meta = JSON.parse(readFileSync(join(ROOT, 'dist/server/meta.json'), 'utf8')) as { inputs: Record<string, unknown> };
    expect(Object.keys(meta.inputs).filter((f) => /node_modules\/(tsx|esbuild|vite|react)\//.test(f))).toEqual([]);
    child = spawn(process.execPath, [join(ROOT, 'dist/server/main.js'), 'serve'], {
      cwd: dir,
      detached: true,
      env: serveEnv({ port, dir, adminToken: ADMIN, seed: 'demo', logLevel: 'info', extra: { NODE_OPTIONS: '' } }),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let log = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
    });
    const url = `http://127.0.0.1:${port}`;
    await waitUntilHealthy(url, child, 60_000, 'the built server');
    // The demo inventory is small: the compiler is warmed before the server answers anything.
    // (The pipe may deliver the listening line a moment after /healthz answered.)
    for (let i = 0; i < 100 && !log.includes('toolgate listening'); i++) await new Promise((r) => setTimeout(r, 20));
    const messages = log.split('\n').flatMap((line) => (line.startsWith('{') ? [(JSON.parse(line) as { msg: string }).msg] : []));
    expect(messages).toContain('compiler warmed before listening');
    expect(messages.indexOf('compiler warmed before listening')).toBeLessThan(messages.indexOf('toolgate listening'));
    // Schemas and demo data are found from the bundle: the seeded tenants are there and validated.
    const tenants = await fetch(`${url}/v1/tenants`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(tenants.status).toBe(200);
    expect(JSON.stringify(await tenants.json())).toContain('acme-research');
    const bad = await fetch(`${url}/v1/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'Not Valid!' }),
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
  }, 120_000);

  it('runs the CLI through bin/toolgate.mjs on the compiled code', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolgate.mjs'), '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: toolgate <command>');
    const bin = readFileSync(join(ROOT, 'bin/toolgate.mjs'), 'utf8');
    expect(bin).not.toContain('tsx');
  });

  it('keeps React, Vite and tsx out of the run-time dependencies', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    for (const dev of ['react', 'react-dom', '@tanstack/react-query', 'vite', 'tsx', 'esbuild']) expect(pkg.dependencies).not.toHaveProperty(dev);
    expect(pkg.dependencies).toHaveProperty('better-sqlite3');
  });
});
