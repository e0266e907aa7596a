import { createBundleClient } from '../runtime/client/bundle-client.ts';
import { FileUsedReceipts } from '../runtime/client/used-receipts.ts';
import { ApprovalHold } from './approval-hold.ts';
import type { BundleClient } from '../runtime/client/bundle-client.ts';
import type { ResolvedConfig } from './config.ts';
import type { DecisionSink } from './decision-sink.ts';
import { Gateway } from './gateway.ts';
import { startHttpListener } from './http-listener.ts';
import type { HttpListener } from './http-listener.ts';
import { createGatewayMetrics } from './metrics.ts';
import { OAuthResourceServer } from './oauth-resource-server.ts';
import { PolicySource } from './policy-source.ts';
import { StateHandles, loadStateKey } from './state-handles.ts';
import { startStdioListener } from './stdio-listener.ts';
import type { StdioListener } from './stdio-listener.ts';
import { Upstream } from './upstream.ts';

export type GatewayLog = { info(message: string, fields?: Record<string, unknown>): void; warn(message: string, fields?: Record<string, unknown>): void };

export type StartOptions = {
  /** Where every decision goes; default: the bundle client's decision log, shipped to the server. */
  sink?: DecisionSink;
  log?: GatewayLog;
  env?: Record<string, string | undefined>;
  fetch?: typeof fetch;
  /** Reconnect backoff of upstreams (defaults 200 ms doubling to 15 s). */
  upstreamBackoff?: { initialMs?: number; maxMs?: number };
};

export type RunningGateway = {
  gateway: Gateway;
  bundleClient: BundleClient;
  /** The MCP endpoint (HTTP mode). */
  url: string | null;
  http: HttpListener | null;
  stdio: StdioListener | null;
  health(): GatewayHealth;
  close(): Promise<void>;
};

export type GatewayHealth = {
  status: 'ok' | 'degraded';
  runtimeId: string;
  tenant: string;
  bundle: ReturnType<PolicySource['status']>;
  upstreams: Record<string, ReturnType<Upstream['status']> & { withheld: Array<{ tool: string; reason: string }> }>;
  sessions: number;
  /** The decision log's shipping state (records buffered, dropped, shipped); null when records go elsewhere. */
  decisions: ReturnType<NonNullable<BundleClient['decisionLog']>['stats']> | null;
};

const silent: GatewayLog = { info: () => undefined, warn: () => undefined };

/** Starts a gateway from a resolved configuration: bundle client, upstreams, core and listener. */
export async function startGateway(config: ResolvedConfig, options: StartOptions): Promise<RunningGateway> {
  const log = options.log ?? silent;
  const bundleClient = await createBundleClient({
    url: config.control.url,
    tenant: config.control.tenant,
    token: config.control.token,
    ...config.control.trust,
    cacheDir: config.control.cacheDir,
    runtimeId: config.control.runtimeId,
    mirrors: config.control.mirrors,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    // Records go to the server through the client's own decision log unless the caller takes them.
    ...(options.sink ? { decisionLog: false } : {}),
  });
  const policy = new PolicySource(bundleClient);
  const upstreams = new Map<string, Upstream>();
  for (const [id, cfg] of config.upstreams) {
    upstreams.set(
      id,
      new Upstream(id, cfg, {
        env: options.env,
        backoff: options.upstreamBackoff,
        relistMs: config.timeouts.relistMs,
        onFailure: (which, message) => log.warn('upstream failed; reconnecting', { upstream: which, cause: message }),
      }),
    );
  }
  const metrics = createGatewayMetrics();
  const sink: DecisionSink = options.sink ?? bundleClient.decisionLog ?? { record: () => undefined };
  // Calls that need a person are held while the control plane asks one; receipts are checked by the keys trusted for bundles.
  const approvals = new ApprovalHold({
    connection: { url: config.control.url, tenant: config.control.tenant, token: config.control.token, ...(options.fetch ? { fetch: options.fetch } : {}) },
    trustedKeys: () => bundleClient.trustedKeys(),
    used: new FileUsedReceipts(config.control.cacheDir, config.control.tenant),
    approvalMs: config.timeouts.approvalMs,
    pendingPerClient: config.limits.pendingApprovalsPerClient,
  });
  const gateway = new Gateway({ config, policy, upstreams, sink, metrics, approvals });
  bundleClient.on('update', (b) => log.info('policy bundle in use', { version: b.bundle.version, revision: b.bundle.revision }));
  bundleClient.on('refused', (r) => log.warn('policy bundle refused', { code: r.code }));
  // Upstreams connect in the background: a slow one must not hold up the others or the listener.
  for (const up of upstreams.values()) void up.start();

  const health = (): GatewayHealth => {
    const withheld = gateway.withheldTools();
    const ups: GatewayHealth['upstreams'] = {};
    let degraded = !policy.current().ok;
    for (const [id, up] of upstreams) {
      const s = up.status();
      if (s.state !== 'ready') degraded = true;
      ups[id] = { ...s, withheld: withheld.get(id) ?? [] };
    }
    return {
      status: degraded ? 'degraded' : 'ok',
      runtimeId: config.control.runtimeId,
      tenant: config.control.tenant,
      bundle: policy.status(),
      upstreams: ups,
      sessions: gateway.sessionCount(),
      decisions: !options.sink && bundleClient.decisionLog ? bundleClient.decisionLog.stats() : null,
    };
  };

  let http: HttpListener | null = null;
  let stdio: StdioListener | null = null;
  try {
    const stateHandles = new StateHandles(await loadStateKey(config.control.cacheDir), config.control.tenant);
    if (config.listen.kind === 'http') {
      http = await startHttpListener({
        listen: config.listen,
        clients: config.clients,
        metricsKeyDigest: config.metricsKeyDigest,
        gateway,
        metrics,
        health,
        sessionsPerClient: config.limits.sessionsPerClient,
        stateHandles,
        oauth: config.oauth ? new OAuthResourceServer(config.oauth, { listenPath: config.listen.path }) : null,
      });
    } else {
      stdio = await startStdioListener(gateway, config.listen.client, { stateHandles });
    }
  } catch (err) {
    await shutdown();
    throw err;
  }

  async function shutdown(): Promise<void> {
    gateway.close();
    await http?.close();
    await stdio?.close();
    policy.close();
    await Promise.all([...upstreams.values()].map((u) => u.close()));
    await bundleClient.close();
  }

  return { gateway, bundleClient, url: http?.url ?? null, http, stdio, health, close: shutdown };
}
