// A real Toolgate server on 127.0.0.1 for distribution tests and benches: createApp on a fresh
// database, served as `toolgate serve` serves it (createToolgateServer), with helpers to mint tokens and place bundles.
import { mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { createApp } from '../../server/app.ts';
import type { Role } from '../../server/context.ts';
import { ToolgateDatabase } from '../../server/db/database.ts';
import { createToolgateServer } from '../../server/http/node-server.ts';
import { openToolgate } from '../../server/startup.ts';
import { insertBundle as storeBundle } from '../../server/store/bundles.ts';
import type { Settings } from '../../server/startup.ts';
import type { SignedBundle } from './signed-bundles.ts';

export const ADMIN_TOKEN = 'tg_distribution_test_admin_0123456789';

export type LiveServer = Awaited<ReturnType<typeof startLiveServer>>;

/** Starts a server; pass the `dir` and `port` of a stopped one to restart it on the same database and address; `settings` override the defaults; `logger` replaces the silent one. */
export async function startLiveServer(opts: { dir?: string; port?: number; seed?: boolean; settings?: Partial<Settings>; logger?: Logger } = {}) {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'toolgate-dist-'));
  const { deps } = await openToolgate(
    {
      host: '127.0.0.1',
      port: opts.port ?? 0,
      dbFile: join(dir, 'toolgate.db'),
      keysDir: join(dir, 'keys'),
      webDir: join(dir, 'no-web'),
      seed: opts.seed ? 'demo' : 'none',
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      ...opts.settings,
    },
    opts.logger ?? pino({ level: 'silent' }),
  );
  const app = createApp(deps);
  const server = createToolgateServer(app, deps, { hostname: '127.0.0.1' });
  server.listen(opts.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  const api = async (method: string, path: string, call: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...(call.headers ?? {}) };
    const token = call.token === undefined ? ADMIN_TOKEN : call.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url + path, { method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) });
    const bytes = Buffer.from(await res.arrayBuffer());
    let json: any;
    try {
      json = bytes.length ? JSON.parse(bytes.toString('utf8')) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8'), json };
  };

  let stopped = false;
  return {
    url,
    port,
    dir,
    deps,
    api,
    async createTenant(id: string): Promise<void> {
      const r = await api('POST', '/v1/tenants', { body: { id, name: `Tenant ${id}` } });
      if (r.status !== 201) throw new Error(`cannot create tenant ${id}: ${r.status} ${r.text}`);
    },
    async tokenFor(role: Role, tenants?: string[]): Promise<string> {
      const r = await api('POST', '/v1/tokens', { body: { label: `${role} for distribution tests`, role, ...(tenants ? { tenants } : {}) } });
      if (r.status !== 201) throw new Error(`cannot create a ${role} token: ${r.status} ${r.text}`);
      return r.json.token as string;
    },
    /** Stores a signed bundle as `version` of its tenant and announces it, as the publish route does after commit. */
    async place(tenant: string, version: number, signed: Pick<SignedBundle, 'text' | 'signature'> & { revision: string }): Promise<void> {
      await insertBundle(deps.database, tenant, version, signed);
      deps.publishEvents.published(tenant, version);
    },
    /** Cuts every connection at once (long polls included) and closes the database, like a killed process. */
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      deps.bundles.close();
      await deps.statusReports.flush();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deps.compiler.close();
      await deps.database.close();
    },
    async dispose(): Promise<void> {
      await this.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes a bundle row straight into a server's database file (e.g. while that server is down). */
export async function insertBundleInto(
  dir: string,
  tenant: string,
  version: number,
  signed: Pick<SignedBundle, 'text' | 'signature'> & { revision: string },
): Promise<void> {
  const database = new ToolgateDatabase(join(dir, 'toolgate.db'));
  try {
    await insertBundle(database, tenant, version, signed);
  } finally {
    await database.close();
  }
}

async function insertBundle(
  database: ToolgateDatabase,
  tenant: string,
  version: number,
  signed: Pick<SignedBundle, 'text' | 'signature'> & { revision: string },
): Promise<void> {
  let kid = 'none';
  try {
    kid = String((JSON.parse(Buffer.from(signed.signature.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: string }).kid ?? 'none');
  } catch {
    // A deliberately broken signature has no readable kid.
  }
  await storeBundle(database.db, {
    tenant,
    version,
    revision: signed.revision,
    content: signed.text,
    signature: signed.signature,
    kid,
    published_by: 'test',
    published_at: new Date().toISOString(),
    reason: null,
    summary: '{}',
    rollback_of: null,
  });
}
