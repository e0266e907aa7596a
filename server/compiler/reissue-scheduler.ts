import type { Bundle } from '../../policy-schemas/types.gen.ts';
import type { AppDeps } from '../context.ts';
import { maintainKeys } from '../signing/key-changes.ts';
import { latestBundleLifetime } from '../store/bundles.ts';
import { publishBundle } from './publish.ts';

export type ReissueOptions = { everyMs?: number; now?: () => Date };

/**
 * Keeps published bundles (and the key set, see maintainKeys) from expiring while nothing changes: every `everyMs` (default one
 * minute), a tenant whose latest bundle has less than half of its lifetime left gets the same
 * content re-signed as a new version with a later expiry (audited as `system`). Without this a
 * quiet tenant's runtimes would go stale at `expiresAt` and a restarted one would deny everything.
 * Returns a function that stops it.
 */
export function startReissueScheduler(
  // The compiler: a large catalog's re-issue summary runs in its worker, not on this thread.
  deps: Pick<AppDeps, 'database' | 'metrics' | 'logger' | 'config' | 'keys' | 'cluster' | 'compiler'>,
  options: ReissueOptions = {},
): () => Promise<void> {
  const now = options.now ?? (() => new Date());
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const tick = async () => {
    // The key set expires like a bundle and is re-issued the same way; scheduled promotions run here too.
    try {
      await maintainKeys(deps, deps.keys);
    } catch (err) {
      deps.logger.error({ err: { message: (err as Error).message } }, 'could not maintain the key set');
    }
    const tenants = await deps.database.db.selectFrom('tenants').select('id').execute();
    for (const { id } of tenants) {
      if (stopped) return;
      // The lifetime comes from the summary column: a scan must not parse every tenant's bundle.
      const lifetime = await latestBundleLifetime(deps.database.db, id);
      if (!lifetime || !needsReissue(lifetime, now())) continue;
      try {
        const r = await publishBundle(
          deps,
          { actor: 'system', requestId: null, reason: 're-issued before expiry; content unchanged' },
          id,
          { reissue: true, now: now() },
          deps.keys,
        );
        deps.logger.info({ tenant: id, version: r.version, revision: r.revision }, 're-issued bundle before expiry');
      } catch (err) {
        deps.logger.error({ tenant: id, err: { message: (err as Error).message } }, 'could not re-issue bundle');
      }
    }
  };

  const timer = setInterval(() => {
    running = running.then(tick).catch((err: unknown) => deps.logger.error({ err: { message: (err as Error).message } }, 're-issue scheduler failed'));
  }, options.everyMs ?? 60_000);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

/** True when less than half of the bundle's lifetime remains. */
export function needsReissue(b: Pick<Bundle, 'issuedAt' | 'expiresAt'>, now: Date): boolean {
  const issued = Date.parse(b.issuedAt);
  const expires = Date.parse(b.expiresAt);
  return now.getTime() >= issued + (expires - issued) / 2;
}
