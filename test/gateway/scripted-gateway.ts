import { createHash, randomBytes } from 'node:crypto';
import type { ApprovalHold } from '../../gateway/approval-hold.ts';
import type { ResolvedClient } from '../../gateway/config.ts';
import { memoryDecisionSink } from '../../gateway/decision-sink.ts';
import { Gateway } from '../../gateway/gateway.ts';
import { type HttpListener, startHttpListener } from '../../gateway/http-listener.ts';
import { createGatewayMetrics } from '../../gateway/metrics.ts';
import { StateHandles } from '../../gateway/state-handles.ts';
import type { UpstreamCallResult } from '../../gateway/upstream.ts';
import type { CallRelay } from '../../gateway/upstream-calls.ts';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { UpstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { MCP_BUNDLE_SUBJECT } from './mcp-bundle.ts';

// The enforcement core in process: a Gateway holding one bundle, in front of one scripted upstream
// named `rec` that serves the fixture's tools (pinned by their own definitions) and answers calls
// as the test says. No process, no transport (listenOver puts an HTTP listener in front of it).

export type ScriptedAnswer = UpstreamCallResult;

export function scriptedGateway(
  bundle: Bundle,
  state: UpstreamFixtureState,
  answer: (name: string, args: Record<string, unknown>, timeoutMs: number, relay: CallRelay) => ScriptedAnswer,
  options: { onRestart?: () => void; approvals?: ApprovalHold } = {},
) {
  const hashes = new Map(state.tools.map((t) => [t.name, definitionHash(t)]));
  const upstream = {
    isReady: () => true,
    definitionHashOf: (n: string) => hashes.get(n),
    call: async (name: string, args: Record<string, unknown>, timeoutMs: number, relay: CallRelay) => answer(name, args, timeoutMs, relay),
    restartAfterTimeout: options.onRestart ?? (() => {}),
    on() {},
    off() {},
  };
  return gatewayHolding(bundle, new Map([['rec', upstream]]), 1000, options.approvals);
}

/**
 * A Gateway holding `bundle` in front of the upstreams given (scripted ones, or real Upstreams),
 * each call and approval wait limited to `timeoutMs`, approvals held by `approvals` when given;
 * its decisions go to an in-memory sink.
 */
export function gatewayHolding(bundle: Bundle, upstreams: Map<string, unknown>, timeoutMs: number, approvals?: ApprovalHold) {
  let current = { loaded: loadBundle(bundle), bundle };
  const sink = memoryDecisionSink();
  const gateway = new Gateway({
    config: { timeouts: { callMs: timeoutMs, approvalMs: timeoutMs, relistMs: 60_000 } },
    policy: { current: () => ({ ok: true, current }), on() {}, off() {} } as never,
    upstreams: upstreams as never,
    sink,
    metrics: createGatewayMetrics(),
    ...(approvals ? { approvals } : {}),
  });
  /** Replaces the bundle the gateway holds, as a publish reaching it would. */
  const hold = (next: Bundle) => void (current = { loaded: loadBundle(next), bundle: next });
  return { gateway, sink, hold };
}

/**
 * An HTTP listener on 127.0.0.1 (path /mcp) in front of `gateway`, serving one scripted client per
 * name, each known by the bearer key given. With `handlesFor`, state handles are signed for that
 * tenant (a fresh key each time); without, the listener's own default.
 */
export function listenOver(gateway: Gateway, keys: Record<string, string>, handlesFor?: string): Promise<HttpListener> {
  return startHttpListener({
    listen: { kind: 'http', host: '127.0.0.1', port: 0, path: '/mcp', allowedOrigins: [] },
    clients: Object.entries(keys).map(([name, key]) => ({ ...scriptedClient(keyDigest(key)), name })),
    metricsKeyDigest: null,
    gateway,
    metrics: createGatewayMetrics(),
    health: () => ({ status: 'ok' }),
    ...(handlesFor === undefined ? {} : { stateHandles: new StateHandles(randomBytes(32), handlesFor) }),
  });
}

/** The digest a client's bearer key is known by in the gateway's config. */
export function keyDigest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** The client the scripted gateway's tests connect as: the bundle's subject, from the initial state. */
export function scriptedClient(keyDigest: Buffer | null = null): ResolvedClient {
  return { name: 'bot', subject: MCP_BUNDLE_SUBJECT, keyDigest, request: { subject: MCP_BUNDLE_SUBJECT }, initialState: 'undefined' };
}
