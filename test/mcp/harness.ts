import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createApp } from '../../server/app.ts';
import { createServerState } from '../../server/app-state.ts';
import { createAuthorizer } from '../../server/auth/permissions.ts';
import { insertToken } from '../../server/auth/tokens.ts';
import type { AppDeps, Role } from '../../server/context.ts';
import { ToolgateDatabase } from '../../server/db/database.ts';
import type { McpTransportPolicy } from '../../server/mcp/transport-policy.ts';
import { createMetrics } from '../../server/observability/metrics.ts';
import { TEST_MCP_POLICY } from '../fixtures/mcp/servers.ts';

export type Harness = {
  deps: AppDeps;
  app: ReturnType<typeof createApp>;
  tokens: Record<'admin' | 'editor' | 'viewer' | 'auditor', string>;
  /** `app.request` with a role's bearer token and a JSON body. */
  call(role: keyof Harness['tokens'] | null, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
};

/** An app over a fresh in-memory database, with one token per role, under the MCP tests' operator policy. */
export async function createHarness(policy: McpTransportPolicy = TEST_MCP_POLICY): Promise<Harness> {
  const database = new ToolgateDatabase(':memory:');
  await database.migrateToLatest();
  const keysDir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-keys-'));
  const base = {
    database,
    logger: pino({ level: process.env.TEST_LOG ?? 'silent' }),
    metrics: createMetrics(),
    authorizer: await createAuthorizer(),
    config: { keysDir, webDir: null, sessionTtlSeconds: 3600, secureCookies: false, mcp: policy },
  };
  // The same in-memory state a server made by openToolgate holds (key store, caches, limiters, events, compiler).
  const deps: AppDeps = { ...base, ...createServerState(base) };
  const now = new Date().toISOString();
  const tokens = {} as Harness['tokens'];
  for (const role of ['admin', 'editor', 'viewer', 'auditor'] as const) {
    const secret = `tg_test_${role}_secret`;
    await insertToken(database.db, {
      id: `t-${role}`,
      label: role,
      role: role as Role,
      tenants: role === 'editor' || role === 'viewer' ? ['acme'] : [],
      secret,
      now,
    });
    tokens[role] = secret;
  }
  const app = createApp(deps);
  return {
    deps,
    app,
    tokens,
    call(role, method, path, body, headers = {}) {
      const h: Record<string, string> = { ...headers };
      if (role) h.authorization = `Bearer ${tokens[role]}`;
      if (body !== undefined) h['content-type'] ??= 'application/json';
      return Promise.resolve(
        app.request(path, { method, headers: h, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) }),
      );
    },
    async close() {
      await deps.compiler.close();
      await database.close();
      rmSync(keysDir, { recursive: true, force: true });
    },
  };
}
