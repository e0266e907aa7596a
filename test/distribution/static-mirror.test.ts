import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBundleClient } from '../../runtime/client/index.ts';
import type { BundleClient } from '../../runtime/client/index.ts';
import { ToolgateDatabase } from '../../server/db/database.ts';
import { StaticMirror, startStaticMirror } from '../../server/distribution/static-mirror.ts';
import { freePort } from '../support/free-port.ts';
import { insertBundleInto, startLiveServer } from './live-server.ts';
import type { LiveServer } from './live-server.ts';
import { jwksOf, makeKey, makeSignedBundle } from './signed-bundles.ts';
import type { TestKey } from './signed-bundles.ts';

// Debian's nginx serving a mirror directory, as a static host or CDN origin would.
let nginx: ChildProcess;
let nginxUrl: string;
let mirrorDir: string;
let nginxDir: string;
let srv: LiveServer;
let key: TestKey;
let client: BundleClient | undefined;
let cacheDir: string;

async function startNginx(root: string): Promise<string> {
  nginxDir = mkdtempSync(join(tmpdir(), 'toolgate-nginx-'));
  const port = await freePort();
  const conf = join(nginxDir, 'nginx.conf');
  const tmp = (name: string) => `${name}_temp_path ${join(nginxDir, name)};`;
  writeFileSync(
    conf,
    `daemon off; master_process on; worker_processes 1; pid ${join(nginxDir, 'nginx.pid')}; error_log ${join(nginxDir, 'error.log')};
events { worker_connections 64; }
http { access_log off; ${tmp('client_body')} ${tmp('proxy')} ${tmp('fastcgi')} ${tmp('uwsgi')} ${tmp('scgi')}
  types { application/json json; } default_type text/plain;
  server { listen 127.0.0.1:${port}; root ${root}; etag on; } }
`,
  );
  // Its own process group, so the master and its worker are stopped together.
  nginx = spawn('/usr/sbin/nginx', ['-p', nginxDir, '-c', conf, '-e', join(nginxDir, 'error.log')], { detached: true, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 500; i++) {
    try {
      await fetch(`${url}/`);
      return url;
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error(`nginx did not start: ${readFileSync(join(nginxDir, 'error.log'), 'utf8')}`);
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  key = await makeKey('k1');
  mirrorDir = mkdtempSync(join(tmpdir(), 'toolgate-mirror-'));
  // nginx workers run as an unprivileged user when started by root: they must be able to read it.
  chmodSync(mirrorDir, 0o755);
  cacheDir = mkdtempSync(join(tmpdir(), 'toolgate-mirror-client-'));
  nginxUrl = await startNginx(mirrorDir);
  srv = await startLiveServer();
});

afterAll(async () => {
  await client?.close();
  if (nginx?.pid) process.kill(-nginx.pid, 'SIGTERM');
  await srv?.dispose();
  for (const d of [mirrorDir, nginxDir, cacheDir]) rmSync(d, { recursive: true, force: true });
});

describe('a static mirror served by nginx', () => {
  it('keeps a client following publishes with the control plane stopped, and refuses a tampered file', async () => {
    await srv.createTenant('acme');
    const token = await srv.tokenFor('runtime', ['acme']);
    const keys = srv.deps.keys;
    const stopMirror = startStaticMirror(new StaticMirror(mirrorDir, srv.deps.database.db, keys), keys, pino({ level: 'silent' }), srv.deps.publishEvents);
    const v3 = await makeSignedBundle({ tenant: 'acme', version: 3 }, key);
    await srv.place('acme', 3, { ...v3, revision: v3.bundle.revision });
    await until('the mirror to hold version 3', () => {
      try {
        return JSON.parse(readFileSync(join(mirrorDir, 'acme', 'latest.json'), 'utf8')).version === 3;
      } catch {
        return false;
      }
    });
    const served = await fetch(`${nginxUrl}/acme/latest.json`);
    expect(await served.text()).toBe(v3.text);
    stopMirror();
    await srv.stop();

    // The control plane is gone: a client starting now gets the publish made before it stopped from the mirror.
    client = await createBundleClient({
      url: srv.url,
      tenant: 'acme',
      token,
      trustedKeys: jwksOf(key),
      cacheDir,
      mirrors: [`${nginxUrl}/`],
      backoff: { initialMs: 20, maxMs: 100 },
      statusIntervalMs: 0,
      decisionLog: false,
    });
    const refused: string[] = [];
    client.on('refused', (r) => refused.push(r.code));
    await until('version 3 from the mirror', () => client!.status().version === 3);
    expect(client.current()?.bundle.tenant).toBe('acme');

    // Another replica publishes version 4 and writes the mirror: the client follows it.
    const v4 = await makeSignedBundle({ tenant: 'acme', version: 4 }, key);
    await insertBundleInto(srv.dir, 'acme', 4, { ...v4, revision: v4.bundle.revision });
    const database = new ToolgateDatabase(join(srv.dir, 'toolgate.db'));
    try {
      await new StaticMirror(mirrorDir, database.db, keys).writeTenant('acme');
    } finally {
      await database.close();
    }
    await until('version 4 from the mirror', () => client!.status().version === 4);

    // A tampered mirror file: version 5's signature beside a body changed after signing is refused, and version 4 stays.
    const v5 = await makeSignedBundle({ tenant: 'acme', version: 5 }, key);
    const forged = v5.text.replace('"version":5', '"version":6');
    expect(forged).not.toBe(v5.text);
    writeFileSync(join(mirrorDir, 'acme', 'latest.json.jws'), v5.signature);
    writeFileSync(join(mirrorDir, 'acme', 'latest.json'), forged);
    await until('the tampered file to be refused', () => refused.length > 0);
    expect(refused[0]).toBe('bad_signature');
    expect(client.status().version).toBe(4);
    expect(client.current()?.bundle.version).toBe(4);
  });
});
