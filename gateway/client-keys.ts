import { createHash, timingSafeEqual } from 'node:crypto';
import type { ResolvedClient } from './config.ts';

/**
 * Finds the client a bearer key belongs to. Keys are held only as sha-256 digests; the presented
 * key is hashed and the digests compared in constant time.
 */
export class ClientKeys {
  private readonly byDigest = new Map<string, ResolvedClient>();

  constructor(clients: readonly ResolvedClient[]) {
    for (const c of clients) if (c.keyDigest) this.byDigest.set(c.keyDigest.toString('hex'), c);
  }

  /** The client for an `Authorization` header value, or null for a missing, malformed or unknown key. */
  authenticate(header: string | undefined): ResolvedClient | null {
    const key = bearer(header);
    if (key === null) return null;
    const digest = createHash('sha256').update(key, 'utf8').digest();
    // The map lookup is by digest, which tells an attacker nothing about any key; the final
    // comparison is constant-time anyway.
    const client = this.byDigest.get(digest.toString('hex'));
    if (!client?.keyDigest || !timingSafeEqual(client.keyDigest, digest)) return null;
    return client;
  }
}

/** Whether `header` carries the key whose digest is `digest` (constant-time). */
export function keyMatches(header: string | undefined, digest: Buffer): boolean {
  const key = bearer(header);
  if (key === null) return false;
  return timingSafeEqual(createHash('sha256').update(key, 'utf8').digest(), digest);
}

function bearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S{1,4096})\s*$/i.exec(header);
  return m ? m[1] : null;
}

/**
 * Counts failed authentications per client address in a fixed window; past `max` failures the
 * address is refused (429) until the window ends, whatever key it sends.
 */
export class FailureLimiter {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly max = 10,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
    private readonly maxAddresses = 10_000,
  ) {}

  /** Milliseconds until the address may try again; 0 when it is not limited. */
  blockedFor(address: string): number {
    const w = this.windows.get(address);
    if (!w) return 0;
    const left = w.start + this.windowMs - this.now();
    if (left <= 0) {
      this.windows.delete(address);
      return 0;
    }
    return w.failures >= this.max ? left : 0;
  }

  fail(address: string): void {
    const t = this.now();
    let w = this.windows.get(address);
    if (!w || t - w.start >= this.windowMs) {
      if (!w && this.windows.size >= this.maxAddresses) this.windows.delete(this.windows.keys().next().value!);
      w = { start: t, failures: 0 };
      this.windows.set(address, w);
    }
    w.failures++;
  }
}
