import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import ipaddr from 'ipaddr.js';
import type { AppEnv } from '../context.ts';

/** A proxy address or range the operator trusts to say who its client was. */
export type TrustedProxy = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * `TOOLGATE_TRUSTED_PROXIES`: addresses or CIDR ranges (comma or space separated) of the load
 * balancers in front of Toolgate. Throws naming the first entry that is neither.
 */
export function parseTrustedProxies(value: string | undefined): TrustedProxy[] {
  const entries = (value ?? '').split(/[\s,]+/).filter(Boolean);
  return entries.map((entry) => {
    try {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      const address = ipaddr.parse(entry);
      return [address, address.kind() === 'ipv4' ? 32 : 128];
    } catch {
      throw new Error(`TOOLGATE_TRUSTED_PROXIES: ${entry} is not an IP address or a CIDR range (for example 10.0.0.0/8)`);
    }
  });
}

function trusted(address: string, proxies: TrustedProxy[]): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // IPv4-mapped IPv6 (::ffff:10.0.0.1, how Node reports IPv4 peers on a dual-stack socket) is judged as IPv4.
    parsed = ipaddr.process(address);
  } catch {
    return false;
  }
  return proxies.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range, bits));
}

/**
 * The address a request came from, for per-client limits. The TCP peer, unless the peer is a
 * trusted proxy: then the right-most `X-Forwarded-For` entry that is not itself a trusted proxy
 * (entries further left were written by the client and prove nothing). Without trusted proxies
 * forwarded headers are never believed: anyone could rotate them to dodge a limit.
 */
export function clientAddress(c: Context<AppEnv>): string {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return addressOf(incoming?.socket?.remoteAddress ?? 'unknown', () => c.req.header('x-forwarded-for'), c.get('deps').config.trustedProxies ?? []);
}

/** clientAddress from its parts: the TCP peer, the X-Forwarded-For header (read only when the peer is a trusted proxy). */
export function addressOf(peer: string, forwardedFor: () => string | undefined, proxies: TrustedProxy[]): string {
  if (proxies.length === 0 || !trusted(peer, proxies)) return peer;
  const forwarded = (forwardedFor() ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (let i = forwarded.length - 1; i >= 0; i--) {
    const hop = forwarded[i];
    if (!ipaddr.isValid(hop)) return peer; // a malformed chain: fall back to the proxy, never to a guess
    if (!trusted(hop, proxies)) return hop;
  }
  return peer;
}
