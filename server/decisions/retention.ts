import type { AppDeps } from '../context.ts';
import { DEFAULT_RETENTION_DAYS, expireDecisions } from './decision-store.ts';

export type RetentionOptions = { everyMs?: number; firstMs?: number; now?: () => Date };

/**
 * Deletes decision records older than `TOOLGATE_DECISIONS_RETENTION_DAYS`: once shortly after
 * start and then every `everyMs` (default 10 minutes), in chunks so that ingestion is never held
 * up for long. Returns a function that stops it (and waits for a pass under way).
 */
export function startDecisionRetention(deps: Pick<AppDeps, 'database' | 'logger' | 'config'>, options: RetentionOptions = {}): () => Promise<void> {
  const now = options.now ?? (() => new Date());
  const days = deps.config.decisions?.retentionDays ?? DEFAULT_RETENTION_DAYS;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const pass = async () => {
    if (stopped) return;
    const before = new Date(now().getTime() - days * 86400_000).toISOString();
    const expired = await expireDecisions((fn) => deps.database.change(fn), deps.database.db, before);
    if (expired > 0) deps.logger.info({ expired, before }, 'decision records past retention deleted');
  };
  const schedule = () => {
    running = running.then(pass).catch((err: unknown) => deps.logger.error({ err: { message: (err as Error).message } }, 'decision retention failed'));
  };

  const first = setTimeout(schedule, options.firstMs ?? 1_000);
  first.unref();
  const timer = setInterval(schedule, options.everyMs ?? 600_000);
  timer.unref();
  return async () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(timer);
    await running;
  };
}
