import { resolve } from 'node:path';
import pino, { type Logger } from 'pino';
import { createAuthorizer } from './auth/permissions.ts';
import type { SsoSettings } from './auth/sso/oidc-client.ts';
import { ssoSettingsFromEnv } from './auth/sso/settings.ts';
import { ensureBootstrapAdmin } from './auth/tokens.ts';
import { approvalSettingsFromEnv, resolveApprovalSettings } from './approvals/approval-settings.ts';
import type { AppDeps, ApprovalSettings } from './context.ts';
import { createServerState } from './app-state.ts';
import { ToolgateDatabase, describeDatabase, isPostgresUrl } from './db/database.ts';
import { type TrustedProxy, parseTrustedProxies } from './http/client-address.ts';
import { parseMcpAllowHosts, parseMcpCommands } from './mcp/transport-policy.ts';
import { DEFAULT_MAX_PER_TENANT, DEFAULT_RETENTION_DAYS } from './decisions/decision-store.ts';
import { createMetrics } from './observability/metrics.ts';
import { seedDatabase } from './seed/seed-demo.ts';

/** Settings read from the environment (see README). */
export type Settings = {
  host: string;
  port: number;
  /** `TOOLGATE_DB`: a SQLite file path (default ./data/toolgate.db) or a `postgres://` URL. */
  dbFile: string;
  keysDir: string;
  webDir: string;
  seed: 'demo' | 'none';
  adminToken: string | undefined;
  logLevel: string;
  /** Send the session cookie with `Secure` always (HTTPS deployments); HTTPS requests get it anyway. */
  secureCookies?: boolean;
  /** `TOOLGATE_MCP_COMMANDS`: absolute paths of the only commands stdio MCP servers may run. */
  mcpCommands?: string[];
  /** `TOOLGATE_MCP_ALLOW_HOSTS`: hosts an http MCP server may use even in loopback/private ranges. */
  mcpAllowHosts?: string[];
  /** `TOOLGATE_METRICS_PUBLIC=1`: serve /metrics without a token. */
  metricsPublic?: boolean;
  /** `TOOLGATE_SESSION_IDLE_SECONDS` (1800) and `TOOLGATE_SESSION_MAX_SECONDS` (43200). */
  sessionIdleSeconds?: number;
  sessionMaxSeconds?: number;
  /** `TOOLGATE_AUTH_FAILURES_PER_MINUTE` (20): failed sign-ins/bearer tokens per client address. */
  authFailuresPerMinute?: number;
  /** `TOOLGATE_DECISIONS_RETENTION_DAYS` (30) and `TOOLGATE_DECISIONS_MAX_PER_TENANT` (1,000,000). */
  decisions?: { retentionDays: number; maxPerTenant: number };
  /** `TOOLGATE_OIDC_*` and `TOOLGATE_PUBLIC_URL`: sign-in through an OpenID provider. */
  sso?: SsoSettings;
  /** `TOOLGATE_TRUSTED_PROXIES`: load balancers in front (addresses or CIDR ranges). */
  trustedProxies?: TrustedProxy[];
  /** `TOOLGATE_MIRROR_DIR`: keep a static mirror of bundles and the key set there. */
  mirrorDir?: string;
  /** `TOOLGATE_REISSUE_CHECK_SECONDS` (60): how often the leader looks for bundles and key sets to re-issue before expiry. */
  reissueCheckSeconds?: number;
  /** `TOOLGATE_APPROVAL_TTL_SECONDS` (3600), `TOOLGATE_APPROVAL_WEBHOOK`, `TOOLGATE_PUBLIC_URL`. */
  approvals?: Partial<ApprovalSettings>;
  /** Drafts with at least this many tools compile in a worker thread (default 300). */
  compileWorkerMinTools?: number;
};

/** The shortest `TOOLGATE_ADMIN_TOKEN` accepted: a guessable bootstrap admin is no admin. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number, not ${raw}`);
  return n;
}

function flag(value: string | undefined): boolean {
  return value === '1' || value === 'true';
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): Settings {
  const port = Number(env.PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, not ${env.PORT}`);
  const seed = env.TOOLGATE_SEED ?? 'demo';
  if (seed !== 'demo' && seed !== 'none') throw new Error(`TOOLGATE_SEED must be "demo" or "none", not ${seed}`);
  const adminToken = env.TOOLGATE_ADMIN_TOKEN || undefined;
  checkAdminToken(adminToken);
  return {
    host: env.HOST ?? '127.0.0.1',
    port,
    dbFile: databaseTarget(env.TOOLGATE_DB),
    keysDir: resolve(env.TOOLGATE_KEYS_DIR ?? './data/keys'),
    webDir: resolve(env.TOOLGATE_WEB_DIR ?? './dist/web'),
    seed,
    adminToken,
    logLevel: env.LOG_LEVEL ?? 'info',
    secureCookies: flag(env.TOOLGATE_SECURE_COOKIES),
    mcpCommands: parseMcpCommands(env.TOOLGATE_MCP_COMMANDS),
    mcpAllowHosts: parseMcpAllowHosts(env.TOOLGATE_MCP_ALLOW_HOSTS),
    metricsPublic: flag(env.TOOLGATE_METRICS_PUBLIC),
    sessionIdleSeconds: positiveInt(env, 'TOOLGATE_SESSION_IDLE_SECONDS', DEFAULT_SESSION_IDLE_SECONDS),
    sessionMaxSeconds: positiveInt(env, 'TOOLGATE_SESSION_MAX_SECONDS', DEFAULT_SESSION_MAX_SECONDS),
    authFailuresPerMinute: positiveInt(env, 'TOOLGATE_AUTH_FAILURES_PER_MINUTE', DEFAULT_AUTH_FAILURES_PER_MINUTE),
    decisions: {
      retentionDays: positiveNumber(env, 'TOOLGATE_DECISIONS_RETENTION_DAYS', DEFAULT_RETENTION_DAYS),
      maxPerTenant: Math.floor(positiveNumber(env, 'TOOLGATE_DECISIONS_MAX_PER_TENANT', DEFAULT_MAX_PER_TENANT)),
    },
    sso: ssoSettingsFromEnv(env),
    mirrorDir: env.TOOLGATE_MIRROR_DIR ? resolve(env.TOOLGATE_MIRROR_DIR) : undefined,
    trustedProxies: parseTrustedProxies(env.TOOLGATE_TRUSTED_PROXIES),
    reissueCheckSeconds: positiveInt(env, 'TOOLGATE_REISSUE_CHECK_SECONDS', DEFAULT_REISSUE_CHECK_SECONDS),
    approvals: approvalSettingsFromEnv(env),
  };
}

/** A PostgreSQL URL as given; a SQLite path made absolute. */
function databaseTarget(value: string | undefined): string {
  if (value && isPostgresUrl(value)) return value;
  return resolve(value || './data/toolgate.db');
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not ${raw}`);
  return n;
}

export const DEFAULT_SESSION_IDLE_SECONDS = 30 * 60;
export const DEFAULT_SESSION_MAX_SECONDS = 12 * 3600;
export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 20;
export const DEFAULT_REISSUE_CHECK_SECONDS = 60;

/** Throws the startup error for a bootstrap token too short to resist guessing. */
export function checkAdminToken(token: string | undefined): void {
  if (token !== undefined && token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new Error(
      `TOOLGATE_ADMIN_TOKEN is ${token.length} characters long; it must have at least ${MIN_ADMIN_TOKEN_LENGTH} (for example: openssl rand -base64 32)`,
    );
  }
}

/**
 * Opens (and migrates, seeds, bootstraps) everything a server needs. Returns the deps and, when
 * a bootstrap admin token was generated, that token, for the caller to print once.
 */
export async function openToolgate(s: Settings, logger?: Logger): Promise<{ deps: AppDeps; generatedAdminToken: string | null }> {
  checkAdminToken(s.adminToken);
  const log = logger ?? pino({ level: s.logLevel, base: { service: 'toolgate' } });
  const database = new ToolgateDatabase(s.dbFile);
  await database.migrateToLatest();
  const metrics = createMetrics();
  const { seeded } = await seedDatabase({ database, metrics }, s.seed === 'demo');
  if (seeded) log.info({ db: describeDatabase(s.dbFile) }, 'seeded a new database with demo data');
  const generatedAdminToken = await ensureBootstrapAdmin({ database, metrics }, s.adminToken, new Date().toISOString());
  // The composition root: what handlers, middleware and schedulers use is made here, once per server
  // (what they keep in memory by createServerState).
  const base = {
    database,
    logger: log,
    metrics,
    authorizer: await createAuthorizer(),
    config: {
      keysDir: s.keysDir,
      webDir: s.webDir,
      sessionTtlSeconds: s.sessionMaxSeconds ?? DEFAULT_SESSION_MAX_SECONDS,
      sessionIdleSeconds: s.sessionIdleSeconds ?? DEFAULT_SESSION_IDLE_SECONDS,
      secureCookies: s.secureCookies ?? false,
      mcp: { commands: s.mcpCommands ?? [], allowHosts: s.mcpAllowHosts ?? [] },
      metricsPublic: s.metricsPublic ?? false,
      authFailuresPerMinute: s.authFailuresPerMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE,
      decisions: s.decisions ?? { retentionDays: DEFAULT_RETENTION_DAYS, maxPerTenant: DEFAULT_MAX_PER_TENANT },
      sso: s.sso,
      mirrorDir: s.mirrorDir,
      trustedProxies: s.trustedProxies ?? [],
      approvals: resolveApprovalSettings(s.approvals),
      compileWorkerMinTools: s.compileWorkerMinTools,
    },
  };
  const deps: AppDeps = { ...base, ...createServerState(base) };
  return { deps, generatedAdminToken };
}
