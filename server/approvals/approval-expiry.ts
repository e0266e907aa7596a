import type { AppDeps } from '../context.ts';
import { expireDue } from './approval-store.ts';

/**
 * Marks pending approval requests past their expiry as expired and deletes their arguments, every
 * `everyMs` (default a minute), so arguments never outlive a request for long even when nobody
 * reads the queue (reads expire due requests too). Returns a function that stops it.
 */
export function startApprovalExpiry(deps: Pick<AppDeps, 'database' | 'logger'>, options: { everyMs?: number; now?: () => Date } = {}): () => Promise<void> {
  const now = options.now ?? (() => new Date());
  let running: Promise<void> = Promise.resolve();
  const schedule = () => {
    running = running
      .then(async () => {
        const expired = await expireDue(deps.database, now().toISOString());
        if (expired > 0) deps.logger.info({ expired }, 'approval requests expired undecided; their arguments were deleted');
      })
      .catch((err: unknown) => deps.logger.error({ err: { message: (err as Error).message } }, 'approval expiry failed'));
  };
  const timer = setInterval(schedule, options.everyMs ?? 60_000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
