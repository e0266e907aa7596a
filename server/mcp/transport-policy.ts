import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isAbsolute } from 'node:path';
import ipaddr from 'ipaddr.js';
import type { McpServer } from '../../policy-schemas/types.gen.ts';
import type { ProblemDetail } from '../errors.ts';

/**
 * What the operator lets imported MCP servers reach: the stdio commands that may run
 * (`TOOLGATE_MCP_COMMANDS`) and the hosts an http transport may reach even inside loopback,
 * private or link-local ranges (`TOOLGATE_MCP_ALLOW_HOSTS`). Empty lists allow no stdio server
 * and only public addresses.
 */
export type McpTransportPolicy = { commands: string[]; allowHosts: string[] };

/** The policy that allows nothing beyond public https/http hosts. */
export const CLOSED_MCP_POLICY: McpTransportPolicy = { commands: [], allowHosts: [] };

/** `TOOLGATE_MCP_COMMANDS`: absolute paths separated by `:`; throws naming a relative entry. */
export function parseMcpCommands(value: string | undefined): string[] {
  const commands = (value ?? '')
    .split(':')
    .map((s) => s.trim())
    .filter(Boolean);
  const relative = commands.find((c) => !isAbsolute(c));
  if (relative !== undefined) throw new Error(`TOOLGATE_MCP_COMMANDS lists "${relative}"; every entry must be an absolute path (entries are separated by ":")`);
  return commands;
}

/** `TOOLGATE_MCP_ALLOW_HOSTS`: host names or IP addresses separated by commas or spaces. */
export function parseMcpAllowHosts(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[\s,]+/)
    .map((h) => normalizeHost(h))
    .filter(Boolean);
}

/** Host names compare case-insensitively, without a trailing dot or IPv6 brackets. */
function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

export function hostAllowed(policy: McpTransportPolicy, host: string): boolean {
  return policy.allowHosts.includes(normalizeHost(host));
}

const RESERVED_ENV = /^TOOLGATE_/i;

/**
 * Why a transport may not be saved or used, one problem per reason with its pointer (empty when
 * allowed). Checked at save and again at connect time: the operator's lists may have changed.
 * Host names are judged here only as far as their spelling goes; their addresses are checked
 * when connecting (see `guardedFetch`).
 */
export function transportProblems(transport: McpServer['transport'], policy: McpTransportPolicy): ProblemDetail[] {
  const problems: ProblemDetail[] = [];
  if (transport.kind === 'stdio') {
    if (!policy.commands.includes(transport.command)) {
      // The allowed paths are the operator's own configuration, shown to whoever may register servers.
      const listed = policy.commands.length ? `it is not one of those listed: ${policy.commands.join(', ')}` : 'it lists none, so no stdio server may run';
      problems.push({
        pointer: '/transport/command',
        message: `is not a command the operator allows: TOOLGATE_MCP_COMMANDS must list its absolute path (${listed})`,
        code: 'transport_not_allowed',
      });
    }
    (transport.env ?? []).forEach((name, i) => {
      if (RESERVED_ENV.test(name)) {
        problems.push({
          pointer: `/transport/env/${i}`,
          message: `${name} is Toolgate's own configuration and is never passed to an MCP server`,
          code: 'transport_not_allowed',
        });
      }
    });
    return problems;
  }
  let url: URL;
  try {
    url = new URL(transport.url);
  } catch {
    return [{ pointer: '/transport/url', message: 'is not a URL', code: 'transport_not_allowed' }];
  }
  const problem = destinationProblem(url, policy);
  if (problem) problems.push({ pointer: '/transport/url', message: problem, code: 'transport_not_allowed' });
  return problems;
}

/**
 * Why a URL may not be fetched, judged on its scheme and, when the host is an IP literal, its
 * address; undefined when allowed so far (a host name's addresses are checked on connect).
 */
export function destinationProblem(url: URL, policy: McpTransportPolicy): string | undefined {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `uses ${url.protocol.replace(/:$/, '')}; only https and http are allowed`;
  const host = normalizeHost(url.hostname);
  if (hostAllowed(policy, host)) return undefined;
  if (ipaddr.isValid(host)) {
    const range = addressRange(host);
    if (range !== 'unicast') return `points at ${host}, a ${describeRange(range)} address; list the host in TOOLGATE_MCP_ALLOW_HOSTS to allow it`;
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    return `points at ${host}, a loopback name; list the host in TOOLGATE_MCP_ALLOW_HOSTS to allow it`;
  }
  return undefined;
}

/**
 * The ipaddr.js range of an address, IPv4-mapped IPv6 judged as the IPv4 address it carries;
 * only `unicast` (public) addresses are reachable without the operator's allowlist.
 */
export function addressRange(address: string): string {
  try {
    return ipaddr.process(address).range();
  } catch {
    return 'invalid';
  }
}

function describeRange(range: string): string {
  const names: Record<string, string> = {
    loopback: 'loopback',
    private: 'private (RFC 1918)',
    linkLocal: 'link-local (cloud metadata lives here)',
    uniqueLocal: 'unique-local IPv6',
    carrierGradeNat: 'carrier-grade NAT',
    unspecified: 'unspecified',
  };
  return names[range] ?? `non-public (${range})`;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` for sockets: resolves, then refuses unless every address is public or the host
 * is allowlisted. The socket connects to the address checked here, so a name that resolves
 * elsewhere a moment later (DNS rebinding) gains nothing.
 */
export function guardedLookup(policy: McpTransportPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      if (!hostAllowed(policy, hostname)) {
        const bad = list.find((a) => addressRange(a.address) !== 'unicast');
        if (bad) {
          const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${bad.address}, a ${describeRange(addressRange(bad.address))} address`);
          e.code = 'EDESTINATION';
          return callback(e, []);
        }
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
