import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { type McpTransportPolicy, destinationProblem, guardedLookup } from './transport-policy.ts';

/** A request refused by the destination policy before anything was sent. */
export class DestinationRefused extends Error {
  readonly code = 'EDESTINATION';
}

/**
 * The fetch an MCP http transport uses: every request (the first, and each redirect hop, which
 * is never followed here but handed back to the caller to request again through this fetch) is
 * checked by scheme and IP literal, and every connection's resolved address by the lookup
 * below, unless the operator allowlisted the host. `close()` ends the pooled connections.
 */
export function guardedFetch(policy: McpTransportPolicy): { fetch: FetchLike; close(): Promise<void> } {
  const agent = new Agent({ connect: { lookup: guardedLookup(policy) } });
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(String(input));
    const problem = destinationProblem(url, policy);
    if (problem) throw new DestinationRefused(problem);
    const res = await undiciFetch(url, { ...(init as object), redirect: 'manual', dispatcher: agent } as Parameters<typeof undiciFetch>[1]);
    return res as unknown as Response;
  };
  return { fetch, close: () => agent.close() };
}
