import ipaddr from 'ipaddr.js';
import type { AppDeps } from '../../context.ts';
import { perDatabase } from '../../db/per-database.ts';
import { FailureLimiter } from '../failure-limiter.ts';
import type { PendingLimits } from './pending-sign-ins.ts';

/** Sign-ins under way at once from everyone: the store's bound whatever the addresses. */
export const MAX_PENDING_SIGN_INS = 10_000;
const DEFAULT_STARTS_PER_MINUTE = 20;

/**
 * The client a start is counted against. An IPv4 address is one client; an IPv6 address counts
 * with its whole /64, which is what one subscriber is handed (counting single IPv6 addresses
 * would give each attacker 2^64 allowances).
 */
export function startClientOf(address: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return address;
  }
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const bytes = (parsed as ipaddr.IPv6).toByteArray().slice(0, 8).concat(new Array(8).fill(0));
  return `${ipaddr.fromByteArray(bytes).toString()}/64`;
}

/**
 * Starts per client: the same allowance per minute as failed sign-ins
 * (`TOOLGATE_AUTH_FAILURES_PER_MINUTE`, default 20), as a token bucket. Each replica counts its
 * own starts; the per-client cap of the store (below) holds across replicas.
 */
const startLimiterOf = perDatabase((_database, perMinute: number) => new FailureLimiter(perMinute));

function startsPerMinute(deps: Pick<AppDeps, 'config'>): number {
  return deps.config.authFailuresPerMinute ?? DEFAULT_STARTS_PER_MINUTE;
}

/** Seconds this client must wait before starting another sign-in, spending one start when it may (0). */
export function spendStart(deps: Pick<AppDeps, 'database' | 'config'>, client: string, now = Date.now()): number {
  const limiter = startLimiterOf(deps.database, startsPerMinute(deps));
  const wait = limiter.retryAfter(client, now);
  if (wait === 0) limiter.fail(client, now);
  return wait;
}

/** How many sign-ins one client and everyone may hold under way (one client: two minutes' allowance). */
export function pendingLimitsOf(deps: Pick<AppDeps, 'config'>): PendingLimits {
  return { perAddress: 2 * startsPerMinute(deps), total: MAX_PENDING_SIGN_INS };
}
