import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBundleClient } from '../../runtime/client/index.ts';
import type { BundleClient, TrustedKeys } from '../../runtime/client/index.ts';
import { freePort } from '../support/free-port.ts';
import { serveEnv, waitUntilHealthy } from '../support/spawned-server.ts';

// `toolgate serve` as a real process, killed with SIGKILL mid-flight and started again on the
// same database, keys and port, while SDK clients keep running.
const ADMIN = 'tg_kill_test_admin_0123456789abcdef';
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function serve(dir: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli/main.ts', 'serve'], {
    env: serveEnv({ port, dir, adminToken: ADMIN, seed: 'none' }),
    stdio: 'ignore',
  });
  children.push(child);
  await waitUntilHealthy(`http://127.0.0.1:${port}`, child, 30_000);
  return child;
}

describe('a killed server', () => {
  it('leaves running clients on their last good bundle, which converge once it is back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-kill-'));
    dirs.push(dir);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await r.json().catch(() => undefined);
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
      return json;
    };

    let server = await serve(dir, port);
    await api('POST', '/v1/tools', {
      id: 'core__lookup',
      description: 'Looks a record up.',
      inputSchema: { type: 'object', additionalProperties: false, required: ['query'], properties: { query: { type: 'string' } } },
      effect: 'read_only',
      redaction: { allow: ['result'] },
    });
    const policy = {
      roles: { agent: { groups: ['default'], allow: ['core__*'], deny: [], requireApproval: [] } },
      bindings: { 'agent:bot': ['agent'] },
      profiles: {},
      bundleTtlSeconds: 3600,
    };
    await api('POST', '/v1/tenants', { id: 'acme', name: 'Acme', policy });
    const v1 = await api('POST', '/v1/tenants/acme/bundles', { reason: 'first' });
    const { token } = await api('POST', '/v1/tokens', { label: 'runtime', role: 'runtime', tenants: ['acme'] });
    const trustedKeys = (await (await fetch(`${url}/.well-known/jwks.json`)).json()) as TrustedKeys;

    const clients: BundleClient[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const cacheDir = await mkdtemp(join(tmpdir(), 'toolgate-kill-client-'));
        dirs.push(cacheDir);
        clients.push(
          await createBundleClient({
            url,
            tenant: 'acme',
            token,
            trustedKeys,
            cacheDir,
            runtimeId: `k-${i}`,
            waitSeconds: 10,
            backoff: { initialMs: 50, maxMs: 300 },
            statusIntervalMs: 0,
          }),
        );
      }
      await until('all fresh on v1', () => clients.every((c) => c.status().version === v1.version && c.status().health === 'fresh'));

      server.kill('SIGKILL');
      await new Promise((r) => server.once('exit', r));
      await until('all stale', () => clients.every((c) => c.status().health === 'stale'));
      for (const c of clients) {
        expect(c.status()).toMatchObject({ version: v1.version, lastError: 'unreachable' });
        expect(c.decide({ subject: 'agent:bot' }, { name: 'core__lookup', arguments: '{"query":"q"}' }).decision).toBe('allow');
      }

      server = await serve(dir, port);
      // Well under the 10 s long-poll: a reconnecting client asks without waiting, so the server confirms at once.
      await until('all fresh again', () => clients.every((c) => c.status().health === 'fresh'), 5_000);
      await api('POST', '/v1/states', { name: 'after-restart', description: 'a change to publish' });
      const v2 = await api('POST', '/v1/tenants/acme/bundles', { reason: 'after restart' });
      await until('all on v2', () => clients.every((c) => c.status().version === v2.version && c.status().health === 'fresh'));
      const fleet = await api('GET', '/v1/tenants/acme/runtimes');
      expect(fleet.latest.version).toBe(v2.version);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      if (server.exitCode === null && server.signalCode === null) {
        server.kill('SIGKILL');
        await new Promise((r) => server.once('exit', r));
      }
    }
  });
});

async function until(what: string, cond: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
