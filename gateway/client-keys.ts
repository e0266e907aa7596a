import { hash, timingSafeEqual } from 'node:crypto';
import type { ResolvedClient } from './config.ts';

/** Whatever a request arrives on (its socket): one memo per connection. */
type Connection = object;

/**
 * Who a request comes from: a configured client; `none` when it carries no credential at all
 * (what a browser's `<img>` or a probe sends: answered 401, but not a failed sign-in, so it cannot
 * lock the address out); `refused` for a credential that names no client (a failed sign-in).
 */
export type Authentication = { kind: 'client'; client: ResolvedClient } | { kind: 'none' } | { kind: 'refused' };

/** Whether an `Authorization` header carries any credential at all. */
export function hasCredential(header: string | undefined): boolean {
  return header !== undefined && header.trim() !== '';
}

/**
 * Finds the client a bearer key belongs to. Configured keys are held only as sha-256 digests; a
 * presented key is hashed and the digests compared in constant time. The header a kept-alive
 * connection authenticated with is kept while the connection lives (see authenticateOn).
 */
export class ClientKeys {
  private readonly byDigest = new Map<string, ResolvedClient>();

  constructor(clients: readonly ResolvedClient[]) {
    for (const c of clients) if (c.keyDigest) this.byDigest.set(c.keyDigest.toString('hex'), c);
  }

  // The header each kept-alive connection last authenticated with, and its client. A client sends
  // the same header on every request of a connection; hashing it again cost more, in a busy
  // gateway, than the call's policy work. Keys are fixed for the life of the process, so a client
  // found once stays right; the header is compared in constant time, as the digests are.
  private readonly byConnection = new WeakMap<Connection, { header: Buffer; client: ResolvedClient }>();

  /** The request's client, or why there is none (see Authentication). */
  identify(connection: Connection, header: string | undefined): Authentication {
    if (!hasCredential(header)) return { kind: 'none' };
    const client = this.authenticateOn(connection, header);
    return client ? { kind: 'client', client } : { kind: 'refused' };
  }

  /** authenticate(), remembering the answer for the connection while it sends the same header. */
  authenticateOn(connection: Connection, header: string | undefined): ResolvedClient | null {
    if (header === undefined) return null;
    const known = this.byConnection.get(connection);
    if (known) {
      const presented = Buffer.from(header, 'utf8');
      if (presented.length === known.header.length && timingSafeEqual(presented, known.header)) return known.client;
    }
    const client = this.authenticate(header);
    if (client) this.byConnection.set(connection, { header: Buffer.from(header, 'utf8'), client });
    else this.byConnection.delete(connection);
    return client;
  }

  /** The client for an `Authorization` header value, or null for a missing, malformed or unknown key. */
  authenticate(header: string | undefined): ResolvedClient | null {
    const key = bearer(header);
    if (key === null) return null;
    const digest = sha256(key);
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
  return timingSafeEqual(sha256(key), digest);
}

/** One-shot digest: no Hash object per request (each is a native handle the collector must track). */
function sha256(key: string): Buffer {
  return hash('sha256', key, 'buffer') as unknown as Buffer;
}

function bearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S{1,4096})\s*$/i.exec(header);
  return m ? m[1] : null;
}

/**
 * Counts failed authentications per client address in a token bucket, as the server does:
 * `perMinute` failures at once, refilled at `perMinute` a minute. Successes cost nothing. An
 * address out of allowance is refused (429) whatever key it sends, until it has allowance again.
 */
export class FailureLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute = 10,
    private readonly now: () => number = Date.now,
    private readonly maxAddresses = 10_000,
  ) {}

  /** Milliseconds until the address may try again; 0 when it may now. */
  blockedFor(address: string): number {
    const b = this.refilled(address);
    return b && b.tokens < 1 ? Math.max(1000, Math.ceil(((1 - b.tokens) * 60_000) / this.perMinute)) : 0;
  }

  fail(address: string): void {
    const b = this.refilled(address) ?? { tokens: this.perMinute, at: this.now() };
    b.tokens -= 1;
    this.buckets.delete(address);
    this.buckets.set(address, b);
    // Beyond the bound the stalest half goes: each new address starts with the same allowance anyway.
    if (this.buckets.size > this.maxAddresses) {
      let drop = this.buckets.size / 2;
      for (const key of this.buckets.keys()) {
        if (drop-- <= 0) break;
        this.buckets.delete(key);
      }
    }
  }

  private refilled(address: string): { tokens: number; at: number } | undefined {
    const b = this.buckets.get(address);
    if (!b) return undefined;
    const t = this.now();
    b.tokens = Math.min(this.perMinute, b.tokens + ((t - b.at) / 60_000) * this.perMinute);
    b.at = t;
    if (b.tokens >= this.perMinute) {
      this.buckets.delete(address);
      return undefined;
    }
    return b;
  }
}
