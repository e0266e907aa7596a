import type { AppDeps } from '../../context.ts';
import { FailureLimiter, clientKeyOf } from '../failure-limiter.ts';
import type { PendingLimits } from './pending-sign-ins.ts';

/** Sign-ins under way at once from everyone: the store's bound whatever the addresses. */
export const MAX_PENDING_SIGN_INS = 10_000;
const DEFAULT_STARTS_PER_MINUTE = 20;

/** The client a start is counted against: an IPv4 address, or an IPv6 address's /64. */
export const startClientOf = clientKeyOf;

function startsPerMinute(deps: Pick<AppDeps, 'config'>): number {
  return deps.config.authFailuresPerMinute ?? DEFAULT_STARTS_PER_MINUTE;
}

/**
 * A server's limiter of sign-in starts per client, made once at start: the same allowance per
 * minute as failed sign-ins (`TOOLGATE_AUTH_FAILURES_PER_MINUTE`, default 20), as a token bucket.
 * Each replica counts its own starts; the per-client cap of the store (below) holds across replicas.
 */
export function createStartLimiter(deps: Pick<AppDeps, 'config'>): FailureLimiter {
  return new FailureLimiter(startsPerMinute(deps));
}

/** Seconds this client must wait before starting another sign-in, spending one start when it may (0). */
export function spendStart(deps: Pick<AppDeps, 'signInStarts'>, client: string, now = Date.now()): number {
  const limiter = deps.signInStarts;
  const wait = limiter.retryAfter(client, now);
  if (wait === 0) limiter.fail(client, now);
  return wait;
}

/** How many sign-ins one client and everyone may hold under way (one client: two minutes' allowance). */
export function pendingLimitsOf(deps: Pick<AppDeps, 'config'>): PendingLimits {
  return { perAddress: 2 * startsPerMinute(deps), total: MAX_PENDING_SIGN_INS };
}
