import { resolve } from 'node:path';
import pino, { type Logger } from 'pino';
import { createAuthorizer } from './auth/permissions.ts';
import { ensureBootstrapAdmin } from './auth/tokens.ts';
import type { AppDeps } from './context.ts';
import { ToolgateDatabase } from './db/database.ts';
import { DEFAULT_MAX_PER_TENANT, DEFAULT_RETENTION_DAYS } from './decisions/decision-store.ts';
import { createMetrics } from './observability/metrics.ts';
import { seedDatabase } from './seed/seed-demo.ts';

/** Settings read from the environment (see README). */
export type Settings = {
  host: string;
  port: number;
  dbFile: string;
  keysDir: string;
  webDir: string;
  seed: 'demo' | 'none';
  adminToken: string | undefined;
  logLevel: string;
  /** Send the session cookie with `Secure` always (HTTPS deployments); HTTPS requests get it anyway. */
  secureCookies?: boolean;
  /** `TOOLGATE_DECISIONS_RETENTION_DAYS` (30) and `TOOLGATE_DECISIONS_MAX_PER_TENANT` (1,000,000). */
  decisions?: { retentionDays: number; maxPerTenant: number };
};

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): Settings {
  const port = Number(env.PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, not ${env.PORT}`);
  const seed = env.TOOLGATE_SEED ?? 'demo';
  if (seed !== 'demo' && seed !== 'none') throw new Error(`TOOLGATE_SEED must be "demo" or "none", not ${seed}`);
  return {
    host: env.HOST ?? '127.0.0.1',
    port,
    dbFile: resolve(env.TOOLGATE_DB ?? './data/toolgate.db'),
    keysDir: resolve(env.TOOLGATE_KEYS_DIR ?? './data/keys'),
    webDir: resolve(env.TOOLGATE_WEB_DIR ?? './dist/web'),
    seed,
    adminToken: env.TOOLGATE_ADMIN_TOKEN || undefined,
    logLevel: env.LOG_LEVEL ?? 'info',
    secureCookies: env.TOOLGATE_SECURE_COOKIES === '1' || env.TOOLGATE_SECURE_COOKIES === 'true',
    decisions: {
      retentionDays: positiveNumber(env, 'TOOLGATE_DECISIONS_RETENTION_DAYS', DEFAULT_RETENTION_DAYS),
      maxPerTenant: Math.floor(positiveNumber(env, 'TOOLGATE_DECISIONS_MAX_PER_TENANT', DEFAULT_MAX_PER_TENANT)),
    },
  };
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not ${raw}`);
  return n;
}

/**
 * Opens (and migrates, seeds, bootstraps) everything a server needs. Returns the deps and, when
 * a bootstrap admin token was generated, that token, for the caller to print once.
 */
export async function openToolgate(s: Settings, logger?: Logger): Promise<{ deps: AppDeps; generatedAdminToken: string | null }> {
  const log = logger ?? pino({ level: s.logLevel, base: { service: 'toolgate' } });
  const database = new ToolgateDatabase(s.dbFile);
  await database.migrateToLatest();
  const metrics = createMetrics();
  const { seeded } = await seedDatabase({ database, metrics }, s.seed === 'demo');
  if (seeded) log.info({ db: s.dbFile }, 'seeded a new database with demo data');
  const generatedAdminToken = await ensureBootstrapAdmin(database.db, s.adminToken, new Date().toISOString());
  const deps: AppDeps = {
    database,
    logger: log,
    metrics,
    authorizer: await createAuthorizer(),
    config: {
      keysDir: s.keysDir,
      webDir: s.webDir,
      sessionTtlSeconds: 12 * 3600,
      secureCookies: s.secureCookies ?? false,
      decisions: s.decisions ?? { retentionDays: DEFAULT_RETENTION_DAYS, maxPerTenant: DEFAULT_MAX_PER_TENANT },
    },
  };
  return { deps, generatedAdminToken };
}
