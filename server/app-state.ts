import { resolve } from 'node:path';
import { ApprovalEvents } from './approvals/approval-events.ts';
import { createFailureLimiter } from './auth/failure-limiter.ts';
import { createStartLimiter } from './auth/sso/start-limit.ts';
import { TokenCache } from './auth/token-cache.ts';
import { ClusterEvents } from './cluster/cluster-events.ts';
import { Compiler, DEFAULT_COMPILE_WORKER_MIN_TOOLS } from './compiler/compiler.ts';
import { OverviewCache } from './insight/overview-cache.ts';
import type { AppDeps } from './context.ts';
import { ImpactSlots } from './decisions/impact-slots.ts';
import { BundleCache } from './distribution/bundle-cache.ts';
import { PublishEvents } from './distribution/publish-events.ts';
import { RuntimeOwners } from './distribution/runtime-owners.ts';
import { StatusRecorder } from './distribution/status-recorder.ts';
import { KeyStore } from './signing/key-store.ts';

/** What a server keeps in memory between requests, beside its database: the parts of AppDeps made here. */
export type ServerState = Pick<
  AppDeps,
  | 'impactSlots'
  | 'publishEvents'
  | 'bundles'
  | 'keys'
  | 'failureLimiter'
  | 'signInStarts'
  | 'statusReports'
  | 'runtimeOwners'
  | 'tokens'
  | 'approvalEvents'
  | 'cluster'
  | 'compiler'
  | 'overview'
>;

/**
 * Makes a server's in-memory state, once per server (openToolgate; the test harnesses that build
 * an app by hand): each server gets its own, so two servers in one process share none of it.
 */
export function createServerState(base: Pick<AppDeps, 'config' | 'database' | 'logger'>): ServerState {
  const { database, logger } = base;
  const publishEvents = new PublishEvents();
  const tokens = new TokenCache(database);
  const approvalEvents = new ApprovalEvents();
  return {
    impactSlots: new ImpactSlots(),
    publishEvents,
    bundles: new BundleCache(database.db, publishEvents),
    keys: new KeyStore(resolve(base.config.keysDir)),
    failureLimiter: createFailureLimiter(base),
    signInStarts: createStartLimiter(base),
    statusReports: new StatusRecorder(database, 200, (err) => logger.warn({ err: { message: (err as Error).message } }, 'runtime status reports not stored')),
    runtimeOwners: new RuntimeOwners(database),
    tokens,
    approvalEvents,
    // Until a cluster is started (serve does), the server is alone: its events stay in this process.
    cluster: new ClusterEvents({ publishEvents, tokens, approvalEvents }, logger),
    // Its worker starts on the first large draft, or when serve starts it.
    compiler: new Compiler({ workerMinTools: base.config.compileWorkerMinTools ?? DEFAULT_COMPILE_WORKER_MIN_TOOLS, logger }),
    overview: new OverviewCache(),
  };
}
