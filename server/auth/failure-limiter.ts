import type { Context } from 'hono';
import ipaddr from 'ipaddr.js';

import type { AppDeps, AppEnv } from '../context.ts';
import { clientAddress } from '../http/client-address.ts';
import { ApiError } from '../errors.ts';

type Bucket = { tokens: number; at: number };

/**
 * The client an address is counted as. An IPv4 address (IPv4-mapped IPv6 included) is one client;
 * an IPv6 address counts with its whole /64, which is what one subscriber is handed: counting
 * single IPv6 addresses would give each of them 2^64 allowances.
 */
export function clientKeyOf(address: string): string {
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

// Addresses tracked at once; beyond it the stalest half is dropped (an attacker spraying
// addresses gains nothing a single address would not: each starts with the same allowance).
const MAX_ADDRESSES = 10_000;

/**
 * Counts failed authentications (unknown bearer tokens, failed sign-ins) per client address in a
 * token bucket: `perMinute` failures at once, refilled at `perMinute` a minute. Successes cost
 * nothing, so busy legitimate clients are never slowed. An address out of allowance gets 429 for
 * every credential it presents, right or wrong, until it has allowance again: answering a right
 * guess differently would let guessing go on.
 */
export class FailureLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly perMinute: number) {}

  /** Seconds until `address` (its client, see clientKeyOf) may try again, or 0 when it may now. */
  retryAfter(address: string, now = Date.now()): number {
    const b = this.refilled(clientKeyOf(address), now);
    return b && b.tokens < 1 ? Math.max(1, Math.ceil(((1 - b.tokens) * 60) / this.perMinute)) : 0;
  }

  /** Records one failure of `address` (its client, see clientKeyOf). */
  fail(address: string, now = Date.now()): void {
    const key = clientKeyOf(address);
    const b = this.refilled(key, now) ?? { tokens: this.perMinute, at: now };
    b.tokens -= 1;
    this.buckets.delete(key);
    this.buckets.set(key, b);
    if (this.buckets.size > MAX_ADDRESSES) {
      let drop = this.buckets.size / 2;
      for (const key of this.buckets.keys()) {
        if (drop-- <= 0) break;
        this.buckets.delete(key);
      }
    }
  }

  private refilled(address: string, now: number): Bucket | undefined {
    const b = this.buckets.get(address);
    if (!b) return undefined;
    b.tokens = Math.min(this.perMinute, b.tokens + ((now - b.at) / 60_000) * this.perMinute);
    b.at = now;
    if (b.tokens >= this.perMinute) {
      this.buckets.delete(address);
      return undefined;
    }
    return b;
  }
}

/** A server's limiter of failed authentications (`TOOLGATE_AUTH_FAILURES_PER_MINUTE`, default 20), made once at start. */
export function createFailureLimiter(deps: Pick<AppDeps, 'config'>): FailureLimiter {
  return new FailureLimiter(deps.config.authFailuresPerMinute ?? 20);
}

/** The failure limiter of the server answering this request. */
export function failureLimiterFor(c: Context<AppEnv>): FailureLimiter {
  return c.get('deps').failureLimiter;
}

/** Throws 429 with Retry-After when this client has no allowance left for credentials. */
export function refuseWhenLimited(c: Context<AppEnv>): void {
  const wait = failureLimiterFor(c).retryAfter(clientAddress(c));
  if (wait > 0) {
    throw new ApiError(429, 'rate_limited', `Too many failed sign-ins or unknown tokens from this address; try again in ${wait} s`, {
      extra: { retryAfter: wait },
      headers: { 'Retry-After': String(wait) },
    });
  }
}

/** Records a failed authentication of this client. */
export function recordFailure(c: Context<AppEnv>): void {
  failureLimiterFor(c).fail(clientAddress(c));
}
