import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createApp } from '../../server/app.ts';
import type { Role } from '../../server/context.ts';
import { type Settings, openToolgate } from '../../server/startup.ts';
import { freshTestDatabase, testBackend } from './test-database.ts';
import { jsonOrUndefined } from './json-or-undefined.ts';

export type TestApp = Awaited<ReturnType<typeof startTestApp>>;
export type Call = { token?: string | null; body?: unknown; headers?: Record<string, string>; raw?: string };

export const ADMIN_TOKEN = 'tg_test_admin_token_0123456789abcdef';

/**
 * A real app on a fresh database (SQLite in a temp directory, or a new PostgreSQL database in the
 * `postgres` test project), seeded with the demo data unless told otherwise, driven in process
 * through `app.request()`; `settings` override the defaults.
 */
export async function startTestApp(opts: { seed?: boolean; webDir?: string | null; settings?: Partial<Settings> } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-test-'));
  const database = await freshTestDatabase(dir);
  const { deps } = await openToolgate(
    {
      host: '127.0.0.1',
      port: 0,
      dbFile: database.target,
      keysDir: join(dir, 'keys'),
      webDir: opts.webDir ?? join(dir, 'no-web'),
      seed: opts.seed === false ? 'none' : 'demo',
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      ...opts.settings,
    },
    pino({ level: 'silent' }),
  );
  // A test meant for PostgreSQL that silently ran on SQLite would prove nothing.
  if (deps.database.engine !== testBackend) throw new Error(`test app opened ${deps.database.engine}, expected ${testBackend}`);
  const app = createApp(deps);

  const request = async (method: string, path: string, call: Call = {}) => {
    const headers: Record<string, string> = { ...(call.headers ?? {}) };
    const token = call.token === undefined ? ADMIN_TOKEN : call.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined = call.raw;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] ??= 'application/json';
    } else if (call.raw !== undefined) {
      headers['content-type'] ??= 'application/json';
    }
    const res = await app.request(path, { method, headers, body });
    const text = await res.text();
    const json = jsonOrUndefined(text);
    return { status: res.status, headers: res.headers, text, json };
  };

  /** Mints a token with the given role through the API, as an admin would. */
  const tokenFor = async (role: Role, tenants?: string[]) => {
    const r = await request('POST', '/v1/tokens', { body: { label: `${role} for tests`, role, ...(tenants ? { tenants } : {}) } });
    if (r.status !== 201) throw new Error(`could not create ${role} token: ${r.text}`);
    return r.json.token as string;
  };

  return {
    app,
    deps,
    dir,
    /** The `TOOLGATE_DB` value of this app's database (a SQLite path or a PostgreSQL URL). */
    dbTarget: database.target,
    request,
    tokenFor,
    async close() {
      await deps.compiler.close();
      await deps.database.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
