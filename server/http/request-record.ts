import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AppDeps } from '../context.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/** The id a request is known by: the caller's `X-Request-Id` when it is a plain token, else a new UUID. */
export function requestIdFor(incoming: string | undefined): string {
  return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** What is counted and logged of every answered request. */
export type RequestRecord = { requestId: string; method: string; route: string; path: string; status: number; seconds: number };

/**
 * Counts a request in the metrics and writes its log line, for every answer the app gives (the
 * listener's conditional-pull path counts through a RequestTally and logs through logRequest).
 */
export function recordRequest(deps: Pick<AppDeps, 'metrics' | 'logger'>, r: RequestRecord): void {
  deps.metrics.httpRequests.inc({ method: r.method, route: r.route, status: String(r.status) });
  deps.metrics.httpDuration.observe({ method: r.method, route: r.route }, r.seconds);
  logRequest(deps.logger, r);
}

/** The request's log line alone, for a path that counts it in the metrics through a RequestTally. */
export function logRequest(logger: Logger, r: RequestRecord): void {
  // Never log headers or bodies: they carry tokens and policy content.
  logger.info({ requestId: r.requestId, method: r.method, route: r.route, path: r.path, status: r.status, ms: Math.round(r.seconds * 10000) / 10 }, 'request');
}
