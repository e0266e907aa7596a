import type { AddressInfo } from 'node:net';
import { createApp } from '../../app.ts';
import { warmBeforeListening, warmCompiler } from '../../compiler/warm-up.ts';
import { startCheckpointScheduler } from '../../audit/checkpoints.ts';
import { startCluster } from '../../cluster/cluster.ts';
import { whileLeader } from '../../cluster/leadership.ts';
import { startReissueScheduler } from '../../compiler/reissue-scheduler.ts';
import { startApprovalExpiry } from '../../approvals/approval-expiry.ts';
import { startDecisionRetention } from '../../decisions/retention.ts';
import { startMcpScheduler } from '../../mcp/scheduler.ts';
import { StaticMirror, startStaticMirror } from '../../distribution/static-mirror.ts';
import { describeDatabase } from '../../db/database.ts';
import { createToolgateServer } from '../../http/node-server.ts';
import { DEFAULT_REISSUE_CHECK_SECONDS, openToolgate, settingsFromEnv } from '../../startup.ts';

const WARM_UP_DELAY_MS = 100;

/** `toolgate serve`: migrate, seed, serve, and keep MCP servers with an interval in sync and bundles from expiring, until SIGINT/SIGTERM. */
export async function run(): Promise<number> {
  const settings = settingsFromEnv();
  const { deps, generatedAdminToken } = await openToolgate(settings);
  // The first start creates the first signing key, the root key and key set v1; later starts say where the root is.
  const { keys } = deps;
  // Before the keys are first used: replicas on one PostgreSQL database create them one at a time.
  const cluster = await startCluster(deps, keys);
  const { keySet } = await keys.keySet();
  const root = await keys.rootInfo();
  deps.logger.info(
    { keySetVersion: keySet.version, expiresAt: keySet.expiresAt, roots: root.roots.map((r) => r.kid) },
    root.canSign
      ? 'key set ready; the root key is on this server'
      : 'key set ready; the root key is kept elsewhere, so key changes need toolgate keys … --root-key FILE',
  );
  const app = createApp(deps);
  let closing = false;
  // A small inventory is warmed before the first request is answered (a publish sent the moment
  // /healthz answers then runs warm); a large one compiles in the compiler's worker, started now
  // (it warms its own validators meanwhile) and given a draft to warm on once the server listens.
  const warmFirst = await warmBeforeListening(deps.database.db, deps.compiler);
  if (!warmFirst) deps.compiler.start();
  else {
    const started = performance.now();
    await warmCompiler(deps.database.db, deps.compiler).catch(() => undefined);
    deps.logger.info({ ms: Math.round(performance.now() - started) }, 'compiler warmed before listening');
  }
  const server = createToolgateServer(app, deps, { hostname: settings.host });
  server.listen(settings.port, settings.host, () => {
    const info = server.address() as AddressInfo;
    deps.logger.info({ url: `http://${settings.host}:${info.port}`, db: describeDatabase(settings.dbFile) }, 'toolgate listening');
    // Once listening (the first requests, health checks among them, go first), warm the compiler in
    // slices so the first publish after a start is as fast as the later ones.
    if (!warmFirst) setTimeout(() => void warmCompiler(deps.database.db, deps.compiler, () => closing).catch(() => undefined), WARM_UP_DELAY_MS).unref();
    if (generatedAdminToken) {
      // Printed once, to the terminal only; it is stored hashed and cannot be shown again.
      process.stdout.write(
        `\nBootstrap admin token (shown once, keep it safe):\n\n  ${generatedAdminToken}\n\nConsole: http://${settings.host}:${info.port}/\n\n`,
      );
    }
  });
  // Jobs that must run once across replicas run on the leader (on SQLite, this one process, from now on).
  const stopJobs = whileLeader(cluster.leadership, () => {
    const stopMcp = startMcpScheduler(deps);
    const stopReissue = startReissueScheduler(deps, { everyMs: (settings.reissueCheckSeconds ?? DEFAULT_REISSUE_CHECK_SECONDS) * 1000 });
    const stopCheckpoints = startCheckpointScheduler(deps, keys);
    const stopRetention = startDecisionRetention(deps);
    const stopApprovalExpiry = startApprovalExpiry(deps);
    return async () => {
      await stopMcp();
      await stopReissue();
      await stopCheckpoints();
      await stopRetention();
      await stopApprovalExpiry();
    };
  });
  const mirrorDir = deps.config.mirrorDir;
  const stopMirror = mirrorDir
    ? startStaticMirror(new StaticMirror(mirrorDir, deps.database.db, keys), keys, deps.logger, deps.publishEvents)
    : () => undefined;
  await new Promise<void>((resolve) => {
    const stop = () => {
      closing = true;
      server.close(() => resolve());
      setTimeout(() => resolve(), 3000).unref();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await stopJobs();
  stopMirror();
  await cluster.close();
  await deps.compiler.close();
  await deps.database.close();
  return 0;
}
