import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ResolvedClient } from '../../gateway/config.ts';
import { memoryDecisionSink } from '../../gateway/decision-sink.ts';
import { Gateway } from '../../gateway/gateway.ts';
import { createGatewayMetrics } from '../../gateway/metrics.ts';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { UpstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { MCP_BUNDLE_SUBJECT } from './mcp-bundle.ts';

// The enforcement core in process: a Gateway holding one bundle, in front of one scripted upstream
// named `rec` that serves the fixture's tools (pinned by their own definitions) and answers calls
// as the test says. No process, no transport.

export type ScriptedAnswer = { ok: true; result: CallToolResult } | { ok: false; code: 'timeout' | 'upstream_unavailable'; message: string };

export function scriptedGateway(
  bundle: Bundle,
  state: UpstreamFixtureState,
  answer: (name: string, args: Record<string, unknown>, timeoutMs: number) => ScriptedAnswer,
  onRestart: () => void = () => {},
) {
  let current = { loaded: loadBundle(bundle), bundle };
  const hashes = new Map(state.tools.map((t) => [t.name, definitionHash(t)]));
  const upstream = {
    isReady: () => true,
    definitionHashOf: (n: string) => hashes.get(n),
    call: async (name: string, args: Record<string, unknown>, timeoutMs: number) => answer(name, args, timeoutMs),
    restartAfterTimeout: onRestart,
    on() {},
    off() {},
  };
  const sink = memoryDecisionSink();
  const gateway = new Gateway({
    config: { timeouts: { callMs: 1000, approvalMs: 1000, relistMs: 60_000 } },
    policy: { current: () => ({ ok: true, current }), on() {}, off() {} } as never,
    upstreams: new Map([['rec', upstream as never]]),
    sink,
    metrics: createGatewayMetrics(),
  });
  /** Replaces the bundle the gateway holds, as a publish reaching it would. */
  const hold = (next: Bundle) => void (current = { loaded: loadBundle(next), bundle: next });
  return { gateway, sink, hold };
}

/** The client the scripted gateway's tests connect as: the bundle's subject, from the initial state. */
export function scriptedClient(keyDigest: Buffer | null = null): ResolvedClient {
  return { name: 'bot', subject: MCP_BUNDLE_SUBJECT, keyDigest, request: { subject: MCP_BUNDLE_SUBJECT }, initialState: 'undefined' };
}
