import type { Logger } from 'pino';
import type { TokenCreate } from '../policy-schemas/types.gen.ts';
import type { Authorizer } from './auth/permissions.ts';
import type { Compiler } from './compiler/compiler.ts';
import type { OverviewCache } from './insight/overview-cache.ts';
import type { ImpactSlots } from './decisions/impact-slots.ts';
import type { BundleCache } from './distribution/bundle-cache.ts';
import type { PublishEvents } from './distribution/publish-events.ts';
import type { SsoSettings } from './auth/sso/oidc-client.ts';
import type { ToolgateDatabase } from './db/database.ts';
import type { TrustedProxy } from './http/client-address.ts';
import type { McpTransportPolicy } from './mcp/transport-policy.ts';
import type { Metrics } from './observability/metrics.ts';
import type { KeyStore } from './signing/key-store.ts';
import type { FailureLimiter } from './auth/failure-limiter.ts';
import type { RuntimeOwners } from './distribution/runtime-owners.ts';
import type { StatusRecorder } from './distribution/status-recorder.ts';
import type { TokenCache } from './auth/token-cache.ts';
import type { ApprovalEvents } from './approvals/approval-events.ts';
import type { ClusterEvents } from './cluster/cluster-events.ts';

export type Role = TokenCreate['role'];

/** How approval requests behave on this server (defaults in server/approvals/approval-settings.ts). */
export type ApprovalSettings = {
  /** A pending request expires this long after it was opened (default 3,600 s). */
  ttlSeconds: number;
  /** Pending requests one token may hold at once (default 100): a flood from one runtime stops there. */
  maxPendingPerRequester: number;
  /** A URL told of each new request by a JSON POST (never the arguments, never a secret). */
  webhook?: string;
  /** The console's base URL for links in webhook messages (`TOOLGATE_PUBLIC_URL`). */
  publicUrl?: string;
};

/** Who is calling, resolved from a bearer token or a console session. */
export type Actor = {
  /** The token behind the request; null for a person signed in through single sign-on. */
  tokenId: string | null;
  label: string;
  /** The strongest role held (for a person, over every mapping that matched). */
  role: Role;
  /** Tenants reached; null = every tenant (admin, auditor). */
  tenants: string[] | null;
  /**
   * A person's role per tenant where their mappings give editor/viewer: it decides tenant-scoped
   * requests for that tenant (a person may edit one tenant and only view another).
   */
  tenantRoles?: Record<string, Role>;
  /** The person signed in through single sign-on: audited as `user:<sub>` with email and name. */
  person?: { sub: string; email: string | null; name: string | null };
  via: 'bearer' | 'session';
};

export type AppConfig = {
  /** Where Ed25519 signing keys live (files mode 0600). */
  keysDir: string;
  /** Built console (Vite output); served at `/` when present. */
  webDir: string | null;
  /** A console session's absolute lifetime. */
  sessionTtlSeconds: number;
  /** A console session unused this long ends (default 30 minutes). */
  sessionIdleSeconds?: number;
  /** Cookies get `Secure` when the console is served over HTTPS. */
  secureCookies: boolean;
  /** What imported MCP servers may run or reach (default: no stdio command, public hosts only). */
  mcp?: McpTransportPolicy;
  /** `/metrics` answers without a token (default: admin or auditor token needed). */
  metricsPublic?: boolean;
  /** Failed sign-ins and bearer failures one client address may make before 429s (default 20 a minute). */
  authFailuresPerMinute?: number;
  /** Decision logs: kept this many days, at most this many records per tenant (oldest go first). */
  decisions?: { retentionDays: number; maxPerTenant: number };
  /** Single sign-on through an OpenID provider; absent = token sign-in only. */
  sso?: SsoSettings;
  /** `TOOLGATE_TRUSTED_PROXIES`: load balancers whose X-Forwarded-For names the client (rate limits per client). */
  trustedProxies?: TrustedProxy[];
  /** `TOOLGATE_MIRROR_DIR`: where the static mirror is written after each publish and key-set change. */
  mirrorDir?: string;
  /** Approval requests: `TOOLGATE_APPROVAL_TTL_SECONDS`, `TOOLGATE_APPROVAL_WEBHOOK`, and where the console is reached (links). */
  approvals?: ApprovalSettings;
  /** Drafts with at least this many tools compile in the compiler's worker thread (default 300; 0: every draft). */
  compileWorkerMinTools?: number;
};

/**
 * The application context: everything a request handler, middleware or scheduler may use, built
 * once per server at start (openToolgate; what it keeps in memory by createServerState in
 * app-state.ts) and handed down, never reached for in a module: two servers in one process share
 * none of it. A function that needs only some of it takes a Pick of the parts it uses.
 * test/build/module-state.test.ts fails on module-level state it does not name.
 */
export type AppDeps = {
  database: ToolgateDatabase;
  logger: Logger;
  metrics: Metrics;
  authorizer: Authorizer;
  config: AppConfig;
  /** How many impact analyses this server runs at once (the rest get 429). */
  impactSlots: ImpactSlots;
  /** This server's notices of new bundles (after commit): its bundle cache, mirror and cluster events follow them. */
  publishEvents: PublishEvents;
  /** The bundles this server hands out, held in memory and following `publishEvents`. */
  bundles: BundleCache;
  /** The signing keys and key set in `config.keysDir`: this server's one store of them (a CLI process makes its own). */
  keys: KeyStore;
  /** Failed sign-ins and unknown bearer tokens per client address (429 past `config.authFailuresPerMinute`). */
  failureLimiter: FailureLimiter;
  /** Single sign-on starts per client address (the same allowance as failures). */
  signInStarts: FailureLimiter;
  /** Runtime status reports, batched before they are written. */
  statusReports: StatusRecorder;
  /** Which token owns each runtime id it reported under (confirmed owners cached). */
  runtimeOwners: RuntimeOwners;
  /** Bearer-token lookups, cached briefly; cleared when tokens change (here or, through `cluster`, elsewhere). */
  tokens: TokenCache;
  /** Wakes this server's long polls on an approval request when it is decided. */
  approvalEvents: ApprovalEvents;
  /**
   * What crosses replicas (publishes, token and key changes, audit appends, approval decisions):
   * alone and leading from the start, joined to the other replicas by startCluster (serve).
   */
  cluster: ClusterEvents;
  /** Compiles drafts (a large one in its worker thread) and keeps them compiled; closed with the server. */
  compiler: Compiler;
  /** The console overview's draft states and bundle part hashes, kept between requests. */
  overview: OverviewCache;
};

export type AppEnv = {
  Variables: {
    requestId: string;
    actor: Actor | null;
    deps: AppDeps;
  };
};

/** The audit actor string of an actor: `user:<sub>`, `token:<id>`, or `system` for the server itself. */
export function actorName(actor: Actor | null): string {
  if (actor?.person) return `user:${actor.person.sub}`;
  return actor ? `token:${actor.tokenId}` : 'system';
}
