import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type {
  Bundle,
  BundleV1,
  DecisionRecord,
  EvaluationRequest,
  EvaluationResult,
  Health,
  LastError,
  RuntimeStatus,
  VerifyCode,
} from '../../policy-schemas/types.gen.ts';
import { createView, decide } from '../decide.ts';
import type { CallDecision, DecideOptions, ToolCall, ToolView } from '../decide.ts';
import { approvalReason, type CallApproval } from '../approval-policy.ts';
import { type ApprovalReceipt, approvalFor } from '../approval-receipt.ts';
import { type ApprovalOutcome, requestApproval } from './approval-requests.ts';
import { FileUsedReceipts } from './used-receipts.ts';
import { evaluate } from '../evaluate.ts';
import type { LoadedBundle } from '../load-bundle.ts';
import { verifyBundle } from '../verify-bundle.ts';
import type { TrustedKeys, VerifyResult } from '../verify-bundle.ts';
import type { RootKey } from '../verify-key-set.ts';
import { Backoff } from './backoff.ts';
import { requestSignal } from './request-signal.ts';
import { BundleCache } from './cache.ts';
import { KeySetSource } from './key-set-source.ts';
import { createDecisionLog, type DecisionLog, type DecisionLogOptions } from './decision-log.ts';

export type BundleClientOptions = {
  /** Base URL of the Toolgate server, e.g. `https://toolgate.example.com`. */
  url: string;
  tenant: string;
  /** A `runtime` token for this tenant. */
  token: string;
  /**
   * The root keys to trust (Ed25519 JWKs): the client fetches the root-signed key set from the
   * server and trusts the signing keys it lists as next or active. Give this or `trustedKeys`.
   */
  trustedRoots?: RootKey[];
  /** Or a fixed set of signing keys (a JWKS) configured out of band; rotation then needs new configuration. */
  trustedKeys?: TrustedKeys;
  /** How often the key set is fetched again (default one hour); also on start and once on an unknown kid. */
  keySetRefreshMs?: number;
  /**
   * After a failed key-set fetch (unreachable, an error status, a key set refused), the first and
   * largest wait before the key set is asked for again, whatever asks (defaults 1 s and 5 min).
   */
  keySetBackoff?: { initialMs?: number; maxMs?: number };
  /**
   * Seconds a bundle past its `expiresAt` still decides (default 0). Past expiry plus grace the
   * bundle allows nothing, in a running process exactly as after a restart.
   */
  expiryGraceSeconds?: number;
  /** Where the last good bundle is kept between restarts. */
  cacheDir: string;
  /** How this runtime names itself in status reports; defaults to `<hostname>-<pid>`. */
  runtimeId?: string;
  fetch?: typeof fetch;
  /**
   * Static mirrors (base URLs serving what `toolgate mirror` writes): when the server cannot be
   * reached, `<base>/<tenant>/latest.json` and its `.jws` are pulled from them instead, with every
   * check a pull from the server gets.
   */
  mirrors?: string[];
  /** Long-poll length asked of the server, in seconds (default 30). */
  waitSeconds?: number;
  /** First and largest wait between failed attempts (defaults 250 ms and 30 s). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Status heartbeat to the server (default 60 s); reports are also sent on every change. */
  statusIntervalMs?: number;
  now?: () => Date;
  /** Decision records shipped to the server (on by default); `false` turns them off. */
  decisionLog?: boolean | Pick<DecisionLogOptions, 'capacity' | 'flushIntervalMs' | 'backoff'>;
  /** Whether decision records carry the request's facts (default true). */
  logFacts?: boolean;
};

/** The bundle a client evaluates with: verified, loaded, with the exact bytes it was signed as. */
export type CurrentBundle = { bundle: Bundle | BundleV1; loaded: LoadedBundle; bytes: Buffer; signature: string };

/** What a client knows about itself; the same facts it reports to the server. */
export type ClientStatus = {
  health: Health;
  version: number | null;
  revision: string | null;
  lastError: LastError | null;
  detail: string | null;
  highestVersionSeen: number;
};

type Events = {
  update: [CurrentBundle];
  refused: [{ code: VerifyCode; message: string }];
  health: [ClientStatus];
};

type PullOutcome = 'again' | 'backoff';

// Approval requests whose connection the client remembers: far more than a runtime has waiting at once.
const MAX_ASKED_THROUGH = 10_000;
const REPORT_TIMEOUT_MS = 5_000;
/** How long close() waits for a last status report before giving up on it. */
const CLOSE_REPORT_MS = 2_000;

/**
 * Keeps one tenant's policy bundle current for a runtime: long-polls the server, accepts a bundle
 * only through verifyBundle, persists it, serves the last good one when the server is down or
 * sends something bad, and denies everything while it holds no good bundle.
 *
 * @example
 *   const client = await createBundleClient({ url, tenant: 'acme', token, trustedKeys, cacheDir: './.toolgate' });
 *   const view = client.evaluate({ subject: 'agent:support-bot' });
 */
export async function createBundleClient(options: BundleClientOptions): Promise<BundleClient> {
  const client = new BundleClient(options);
  await client.start();
  return client;
}

export class BundleClient {
  private readonly events = new EventEmitter();
  private readonly cache: BundleCache;
  private readonly backoff: Backoff;
  private readonly fetchFn: typeof fetch;
  private readonly runtimeId: string;
  private readonly waitSeconds: number;
  private readonly now: () => Date;
  private readonly base: string;
  /** Where decide() records what it decided; undefined with `decisionLog: false`. */
  readonly decisionLog: DecisionLog | undefined;

  private held: CurrentBundle | undefined;
  private highestVersionSeen = 0;
  /** The revision of the latest bundle refused, sent in If-None-Match so the server waits for another. */
  private refusedRevision: string | undefined;
  /**
   * The version the server gave that refused bundle, at most one above the held one. Sent as Toolgate-Version when above the held
   * one: the server treats a version above Toolgate-Version as news even when its ETag is named, so
   * naming only the held version would have it send the refused bundle again after every backoff.
   */
  private refusedVersion: number | undefined;
  /** Whether the last request got an HTTP answer; until one does, pulls do not long-poll. */
  private reachable = false;
  private state: ClientStatus = { health: 'none', version: null, revision: null, lastError: null, detail: null, highestVersionSeen: 0 };

  private closed = false;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  private reporting: Promise<void> | undefined;
  private reportAgain = false;
  private readonly keySource: KeySetSource | undefined;
  private keySetTimer: NodeJS.Timeout | undefined;
  private keySetRefresh: Promise<void> | undefined;
  /** Failed key-set fetches back off, capped, with jitter: a failing endpoint is not asked on every pull. */
  private readonly keySetBackoff: Backoff;
  /** Until when (ms since the epoch, real time) no key-set fetch is made after a failure. */
  private keySetRetryAt = 0;
  private readonly graceMs: number;
  private readonly mirrors: string[];
  private usedReceipts: FileUsedReceipts | undefined;
  /** The connection (or none) each approval request this client opened was for, by request id. */
  private readonly askedThrough = new Map<string, string | null>();
  /** Each mirror's last ETag for latest.json, sent in If-None-Match. */
  private readonly mirrorEtags = new Map<string, string>();

  constructor(private readonly options: BundleClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
    this.mirrors = (options.mirrors ?? []).map((m) => m.replace(/\/+$/, ''));
    this.cache = new BundleCache(options.cacheDir, options.tenant);
    this.backoff = new Backoff(options.backoff?.initialMs, options.backoff?.maxMs);
    this.keySetBackoff = new Backoff(options.keySetBackoff?.initialMs ?? 1_000, options.keySetBackoff?.maxMs ?? 300_000);
    this.fetchFn = options.fetch ?? fetch;
    this.runtimeId = options.runtimeId ?? defaultRuntimeId();
    this.waitSeconds = Math.max(0, Math.min(60, Math.floor(options.waitSeconds ?? 30)));
    this.now = options.now ?? (() => new Date());
    if (!options.trustedRoots === !options.trustedKeys)
      throw new Error('createBundleClient: give trustedRoots (root keys; the key set is fetched) or trustedKeys (a fixed JWKS), not both');
    this.graceMs = Math.max(0, options.expiryGraceSeconds ?? 0) * 1000;
    if (options.trustedRoots) {
      this.keySource = new KeySetSource({
        url: this.base,
        trustedRoots: options.trustedRoots,
        cacheDir: options.cacheDir,
        fetch: this.fetchFn,
        signal: this.abort.signal,
        now: this.now,
        mirrors: this.mirrors,
        serverReachable: () => this.reachable,
      });
    }
    const logOptions = typeof options.decisionLog === 'object' ? options.decisionLog : {};
    this.decisionLog =
      options.decisionLog === false
        ? undefined
        : createDecisionLog({
            ...logOptions,
            url: this.base,
            tenant: options.tenant,
            token: options.token,
            runtimeId: this.runtimeId,
            logFacts: options.logFacts,
            fetch: this.fetchFn,
          });
  }

  /** Loads and re-verifies the cache, then starts pulling in the background. */
  async start(): Promise<void> {
    if (this.keySource) {
      const cached = await this.keySource.load();
      if (!cached.ok) this.refuse(cached.code, `cached key set refused: ${cached.message}`);
      await this.refreshKeySet();
      this.keySetTimer = setInterval(() => void this.refreshKeySet(), this.options.keySetRefreshMs ?? 3_600_000);
      this.keySetTimer.unref();
    }
    await this.loadCache();
    this.loop = this.run();
    const every = this.options.statusIntervalMs ?? 60_000;
    if (every > 0) {
      this.heartbeat = setInterval(() => void this.report(), every);
      this.heartbeat.unref();
    }
    void this.report();
  }

  /** The bundle in use, or undefined while the client holds no good bundle. */
  current(): CurrentBundle | undefined {
    return this.held;
  }

  status(): ClientStatus {
    // Expiry shows at once, even between the timer's ticks.
    if (this.held && Date.parse(this.held.bundle.expiresAt) <= this.now().getTime() && this.state.lastError !== 'expired')
      this.setState(this.state.lastError, this.state.detail);
    return { ...this.state };
  }

  /** The signing keys the client trusts now: the verified key set's (trustedRoots), or the fixed `trustedKeys`. */
  trustedKeys(): TrustedKeys | undefined {
    return this.keySource ? this.keySource.trustedKeys() : this.options.trustedKeys;
  }

  /**
   * A person's approval receipt as decide() takes it: checked offline against the keys this client
   * trusts, and allowing one call only (used ids are kept in the cache directory until they expire).
   */
  approval(receipt: unknown): CallApproval {
    this.usedReceipts ??= new FileUsedReceipts(this.options.cacheDir, this.options.tenant);
    const checked = approvalFor(receipt, { trustedKeys: this.trustedKeys() ?? { keys: [] }, used: this.usedReceipts, now: this.now });
    const id = (receipt as { payload?: { id?: unknown } } | null)?.payload?.id;
    return {
      redeem: (call) => {
        // A receipt names no connection: one this client asked for holds only through the connection it asked for.
        if (typeof id === 'string' && this.askedThrough.has(id) && this.askedThrough.get(id) !== (call.connectionId ?? null)) {
          return { ok: false, message: 'the approval receipt is for the call through another connection' };
        }
        return checked.redeem(call);
      },
    };
  }

  /**
   * Asks a person to approve a call decide() answered `require_approval`, and waits (long-poll) for
   * the outcome; with `approved`, `decide(view, call, { approval: client.approval(outcome.receipt) })`.
   */
  requestApproval(view: ToolView, call: ToolCall, decided: CallDecision, options: Parameters<typeof requestApproval>[2] = {}): Promise<ApprovalOutcome> {
    const args = typeof call.arguments === 'string' ? (JSON.parse(call.arguments) as Record<string, unknown>) : (call.arguments ?? {});
    return requestApproval(
      { url: this.options.url, tenant: this.options.tenant, token: this.options.token, fetch: this.fetchFn },
      {
        subject: view.request.subject,
        tool: call.name,
        arguments: args,
        reason: approvalReason(view, decided, call.name, call.connectionId),
        bundleVersion: view.loaded.version,
        toolCallId: decided.toolCallId,
      },
      {
        ...options,
        onOpened: (a) => {
          this.rememberAskedThrough(a.id, call.connectionId ?? null);
          options.onOpened?.(a);
        },
      },
    );
  }

  /** Records the connection a request was opened for (a bounded number, oldest forgotten first). */
  private rememberAskedThrough(id: string, connectionId: string | null): void {
    this.askedThrough.delete(id);
    this.askedThrough.set(id, connectionId);
    if (this.askedThrough.size > MAX_ASKED_THROUGH) this.askedThrough.delete(this.askedThrough.keys().next().value as string);
  }

  /** The key set the client trusts bundles through (trustedRoots only). */
  keySet() {
    return this.keySource?.keySet();
  }

  /** Whether the held bundle is past `expiresAt` plus the grace period: then it allows nothing. */
  expired(): boolean {
    return !!this.held && Date.parse(this.held.bundle.expiresAt) + this.graceMs <= this.now().getTime();
  }

  /** What `request` may see under the current bundle; with no good bundle, or an expired one, nothing at all. */
  evaluate(request: EvaluationRequest): EvaluationResult {
    if (!this.held || this.expired()) return { roles: [], groups: [], state: request.state ?? 'undefined', tools: [], filtered: [] };
    return evaluate(this.held.loaded, request);
  }

  /** A view of what `request` may see, fixed for one turn; undefined while no good (unexpired) bundle is held. */
  view(request: EvaluationRequest): ToolView | undefined {
    return this.held && !this.expired() ? createView(this.held.loaded, request) : undefined;
  }

  /**
   * Decides one tool call, against a view from view() or a request evaluated now. With no good
   * bundle every call is denied. `options.approval` may be a person's receipt as the server
   * answered it (`{ payload, signature }`), checked here with the keys this client trusts.
   */
  decide(against: ToolView | EvaluationRequest, call: ToolCall, options?: { approval?: CallApproval | ApprovalReceipt }): CallDecision {
    // An expired bundle decides nothing, even through a view taken before it expired.
    const view = this.expired() ? undefined : 'loaded' in against ? against : this.view(against);
    const tool = typeof call.name === 'string' ? call.name : '';
    if (!view) {
      const denied: CallDecision = {
        toolCallId: typeof call.toolCallId === 'string' && call.toolCallId !== '' ? call.toolCallId : globalThis.crypto.randomUUID(),
        decision: 'deny',
        errorCode: 'policy_denied',
        message: this.expired() ? 'policy bundle expired' : 'no trusted policy bundle is loaded; every call is denied',
      };
      this.decisionLog?.record(unbundledRecord('loaded' in against ? against.request : against, tool, denied, this.options.logFacts ?? true));
      return denied;
    }
    const approval = options?.approval;
    const evidence: DecideOptions =
      approval === undefined
        ? {}
        : { approval: typeof (approval as Partial<CallApproval>).redeem === 'function' ? (approval as CallApproval) : this.approval(approval) };
    const decided = decide(view, call, evidence);
    this.decisionLog?.recordDecision(view, tool, decided);
    return decided;
  }

  on<E extends keyof Events>(event: E, listener: (...args: Events[E]) => void): () => void {
    this.events.on(event, listener as (...args: unknown[]) => void);
    return () => this.events.off(event, listener as (...args: unknown[]) => void);
  }

  /** Stops pulling and reporting; the current bundle stays readable. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.wake?.();
    clearInterval(this.heartbeat);
    clearTimeout(this.expiryTimer);
    clearInterval(this.keySetTimer);
    await Promise.all([this.loop, this.decisionLog?.close()]);
    await this.keySetRefresh;
    // Let a report still in flight (or owed) reach the server, so the fleet view ends on the last state.
    if (this.reporting) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.reporting, new Promise((r) => (timer = setTimeout(r, CLOSE_REPORT_MS)))]);
      clearTimeout(timer);
    }
  }

  private async loadCache(): Promise<void> {
    const read = await this.cache.read();
    if (read.kind === 'empty') return;
    if (read.kind === 'unreadable') {
      this.highestVersionSeen = read.highestVersionSeen ?? 0;
      this.setState('malformed', `cache refused: ${read.message}`);
      return;
    }
    const { entry } = read;
    this.highestVersionSeen = entry.highestVersionSeen;
    // Expiry is not a reason to refuse the cache: the held bundle then allows nothing (expired()),
    // exactly as it would in a process that kept running.
    const verdict = await this.verify(entry.bytes, entry.signature, entry.highestVersionSeen, Number.POSITIVE_INFINITY);
    if (!verdict.ok) {
      this.setState(verdict.code, `cache refused: ${verdict.message}`);
      this.emit('refused', { code: verdict.code, message: `cache refused: ${verdict.message}` });
      return;
    }
    this.hold({ bundle: verdict.bundle, loaded: verdict.loaded, bytes: entry.bytes, signature: entry.signature });
    // Not yet confirmed by the server: stale until the first answer says this is the latest.
    this.setState(null, 'loaded from cache; not yet confirmed by the server', 'stale');
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      const outcome = await this.pullOnce();
      if (this.closed) return;
      if (outcome === 'again') {
        this.backoff.reset();
        continue;
      }
      await this.sleep(this.backoff.next());
    }
  }

  private async pullOnce(): Promise<PullOutcome> {
    const etags = [this.held?.bundle.revision, this.refusedRevision].filter((e): e is string => !!e);
    const headers: Record<string, string> = {};
    if (etags.length > 0) headers['if-none-match'] = etags.map((e) => `"${e}"`).join(', ');
    const seenVersion = Math.max(this.held?.bundle.version ?? 0, this.refusedRevision ? (this.refusedVersion ?? 0) : 0);
    if (seenVersion > 0) headers['toolgate-version'] = String(seenVersion);
    // Right after starting or losing the server, ask without waiting so that a reachable server
    // confirms the bundle at once; after that, long-poll (also for a tenant with nothing published yet).
    const wait = this.reachable ? this.waitSeconds : 0;
    const got = await this.get(`bundles/latest?wait=${wait}`, headers, wait);
    if (!got) {
      if (this.mirrors.length > 0 && !this.closed) await this.pullFromMirrors();
      // Back off either way: the server is tried again first.
      return 'backoff';
    }
    // The server answers: its key set comes before a mirror's, and before this answer is judged.
    if (this.keySource?.wantsServerKeySet()) await this.takeServerKeySet();
    let { res, bytes } = got;
    if (res.status === 304) {
      const etag = unquote(res.headers.get('etag'));
      if (etag !== undefined && etag === this.refusedRevision && etag !== this.held?.bundle.revision) return 'again';
      // Same content re-issued as a newer version (a rollback to it, a fresh expiry): fetch that version.
      const version = Number(res.headers.get('toolgate-version'));
      if (!(this.held && Number.isSafeInteger(version) && version > this.held.bundle.version)) {
        this.setState(null, null);
        return 'again';
      }
      const pinned = await this.get(`bundles/${version}`, {}, 0);
      if (!pinned) return 'backoff';
      ({ res, bytes } = pinned);
    }
    if (res.status !== 200) {
      const code: LastError = res.status === 401 || res.status === 403 ? 'unauthorized' : res.status === 404 ? 'not_found' : 'server_error';
      this.setState(code, `the server answered ${res.status}`);
      return 'backoff';
    }
    if (this.held && bytes.equals(this.held.bytes)) {
      this.setState(null, null);
      return 'again';
    }
    const outcome = await this.consider(bytes, res.headers.get('toolgate-signature'), unquote(res.headers.get('etag')));
    // The header is not signed: a stale replica or a proxy could inflate it and so hide a later
    // re-issue of the same content. One above the held version is all the server needs to hold the
    // usual refused successor; a refused bundle further ahead is only sent again, as before.
    const served = Number(res.headers.get('toolgate-version'));
    const held = this.held?.bundle.version;
    this.refusedVersion = this.refusedRevision && held !== undefined && Number.isSafeInteger(served) && served > held ? Math.min(served, held + 1) : undefined;
    return outcome;
  }

  /**
   * With the server unreachable: the tenant's latest bundle from the first mirror that answers,
   * verified as a pull from the server is (signature, tenant, rollback, expiry, conformance).
   */
  private async pullFromMirrors(): Promise<void> {
    const tenant = encodeURIComponent(this.options.tenant);
    for (const base of this.mirrors) {
      const request = requestSignal(this.abort.signal, 15_000);
      try {
        const url = `${base}/${tenant}/latest.json`;
        const signal = request.signal;
        const etag = this.mirrorEtags.get(base);
        let res = await this.fetchFn(url, { headers: etag ? { 'if-none-match': etag } : {}, signal });
        const jws = await this.fetchFn(`${url}.jws`, { signal });
        if (jws.status !== 200) continue;
        const signature = (await jws.text()).trim();
        if (res.status === 304) {
          if (this.held?.signature === signature) return;
          // A static host's ETag (nginx: mtime in seconds and size) can miss a rewrite within the
          // same second; the signature cannot, so a new one fetches the document unconditionally.
          res = await this.fetchFn(url, { signal });
        }
        if (res.status !== 200) continue;
        const bytes = Buffer.from(await res.arrayBuffer());
        if (this.held && bytes.equals(this.held.bytes)) {
          this.rememberMirrorEtag(base, res);
          return;
        }
        await this.consider(bytes, signature, undefined);
        // A refused file is fetched again next time (it may be fixed); an accepted one is not.
        if (this.held && bytes.equals(this.held.bytes)) this.rememberMirrorEtag(base, res);
        else this.mirrorEtags.delete(base);
        return;
      } catch {
        // Try the next mirror.
      } finally {
        request.done();
      }
    }
  }

  private rememberMirrorEtag(base: string, res: Response): void {
    const etag = res.headers.get('etag');
    if (etag) this.mirrorEtags.set(base, etag);
  }

  /** GETs a path under the tenant; undefined (state set) when the server cannot be reached. */
  private async get(path: string, headers: Record<string, string>, waitSeconds: number): Promise<{ res: Response; bytes: Buffer } | undefined> {
    const url = `${this.base}/v1/tenants/${encodeURIComponent(this.options.tenant)}/${path}`;
    const request = requestSignal(this.abort.signal, (waitSeconds + 15) * 1000);
    try {
      const res = await this.fetchFn(url, {
        headers: { authorization: `Bearer ${this.options.token}`, accept: 'application/json', ...headers },
        signal: request.signal,
      });
      const bytes = Buffer.from(await res.arrayBuffer());
      this.reachable = true;
      return { res, bytes };
    } catch (err) {
      this.reachable = false;
      if (!this.closed) this.setState('unreachable', `cannot reach the server: ${errorText(err)}`);
      return undefined;
    } finally {
      request.done();
    }
  }

  /** Verifies a bundle the server sent and, when it passes, makes it current and persists it. */
  private async consider(bytes: Buffer, signature: string | null, etag: string | undefined): Promise<PullOutcome> {
    const verdict = await this.verify(bytes, signature, this.highestVersionSeen, this.graceMs / 1000);
    if (this.closed) return 'backoff';
    if (!verdict.ok) {
      this.refusedRevision = etag;
      this.setState(verdict.code, verdict.message);
      this.emit('refused', { code: verdict.code, message: verdict.message });
      return 'backoff';
    }
    const current: CurrentBundle = { bundle: verdict.bundle, loaded: verdict.loaded, bytes, signature: signature!.trim() };
    this.refusedRevision = undefined;
    this.hold(current);
    this.setState(null, null);
    this.emit('update', current);
    // In use from here on; persisted before the next pull (fsyncs are slow on some disks).
    try {
      await this.cache.write({ bytes, signature: current.signature, version: current.bundle.version, highestVersionSeen: this.highestVersionSeen });
    } catch (err) {
      this.setState(null, `accepted but not persisted: ${errorText(err)}`);
    }
    return 'again';
  }

  /**
   * verifyBundle against the trusted keys; with trustedRoots, a kid the key set does not list
   * makes the client fetch the key set once more before refusing.
   */
  private async verify(bytes: Buffer, signature: string | null, highestVersionSeen: number, expiryGraceSeconds: number): Promise<VerifyResult> {
    const attempt = (trustedKeys: TrustedKeys) =>
      verifyBundle(bytes, signature, { trustedKeys, tenant: this.options.tenant, highestVersionSeen, now: this.now(), expiryGraceSeconds });
    if (!this.keySource) return attempt(this.options.trustedKeys!);
    let keys = this.keySource.trustedKeys();
    let verdict = keys ? await attempt(keys) : undefined;
    if (!verdict || (!verdict.ok && verdict.code === 'unknown_kid')) {
      // A refresh already under way may have fetched the key set before this key was added: wait, then fetch anew.
      await this.keySetRefresh;
      await this.refreshKeySet();
      keys = this.keySource.trustedKeys();
      if (!keys) return { ok: false, code: 'unknown_kid', message: 'no verified, unexpired key set: no signing key is trusted yet' };
      verdict = await attempt(keys);
    }
    return verdict;
  }

  /**
   * Fetches the key set; a refused one is reported (the last verified one stays in use). A held
   * bundle whose key the new key set no longer lists as next or active is no longer trusted.
   */
  private refreshKeySet(): Promise<void> {
    // One refresh at a time; close() waits for it, so nothing is written after the client closed.
    this.keySetRefresh ??= this.refreshKeySetNow().finally(() => (this.keySetRefresh = undefined));
    return this.keySetRefresh;
  }

  /**
   * Replaces a key set a mirror gave with the server's: a hostile mirror may serve an old,
   * unexpired key set that still lists a key retired since (and a bundle signed with it).
   */
  private async takeServerKeySet(): Promise<void> {
    await this.keySetRefresh;
    if (!this.keySource?.wantsServerKeySet() || this.closed) return;
    this.keySetRefresh ??= this.refreshKeySetNow(true).finally(() => (this.keySetRefresh = undefined));
    await this.keySetRefresh;
  }

  private async refreshKeySetNow(serverOnly = false): Promise<void> {
    if (!this.keySource || this.closed) return;
    // Backing off after a failure: the key set in use (if any) stays, and the next attempt waits its turn.
    if (Date.now() < this.keySetRetryAt) return;
    const r = await this.keySource.refresh({ serverOnly });
    if (this.closed) return;
    if (r.ok) {
      this.keySetBackoff.reset();
      this.keySetRetryAt = 0;
    } else this.keySetRetryAt = Date.now() + this.keySetBackoff.next();
    if (!r.ok && r.code !== 'unreachable' && r.code !== 'server_error') this.refuse(r.code, `key set refused: ${r.message}`);
    const kid = this.held ? signerKid(this.held.signature) : undefined;
    const listed = kid === undefined ? undefined : this.keySource.trustedKeys()?.keys.find((k) => k.kid === kid);
    if (r.ok && this.held && (!listed || listed.status === 'retired')) {
      this.held = undefined;
      clearTimeout(this.expiryTimer);
      this.refuse(
        listed ? 'retired_key' : 'unknown_kid',
        `the bundle in use was signed by ${kid}, which the key set v${r.keySet.version} ${listed ? 'lists as retired' : 'no longer lists'}`,
      );
      this.wake?.();
    }
  }

  private refuse(code: VerifyCode, message: string): void {
    this.setState(code, message);
    this.emit('refused', { code, message });
  }

  private hold(current: CurrentBundle): void {
    this.held = current;
    this.highestVersionSeen = Math.max(this.highestVersionSeen, current.bundle.version);
    clearTimeout(this.expiryTimer);
    const left = Date.parse(current.bundle.expiresAt) - this.now().getTime();
    // At expiry the health turns stale/expired at once (expired() denies from then on, after any grace).
    const at = (ms: number, then?: () => void) => {
      this.expiryTimer = setTimeout(
        () => {
          this.setState(this.state.lastError, this.state.detail);
          then?.();
        },
        Math.max(0, Math.min(ms, 2 ** 31 - 1)),
      );
      this.expiryTimer.unref();
    };
    // Once at expiry and, with a grace period, once more when the grace ends.
    at(left + 1, this.graceMs > 0 ? () => at(this.graceMs) : undefined);
  }

  /**
   * Sets health from what just happened: no error and a held bundle is fresh; an error while
   * holding one is stale; nothing held is none. An expired held bundle is never fresh.
   */
  private setState(lastError: LastError | null, detail: string | null, health?: Health): void {
    let h: Health = health ?? (!this.held ? 'none' : lastError ? 'stale' : 'fresh');
    if (this.held && Date.parse(this.held.bundle.expiresAt) <= this.now().getTime()) {
      h = 'stale';
      const note = this.expired()
        ? `the bundle expired at ${this.held.bundle.expiresAt}; nothing is allowed`
        : `the bundle expired at ${this.held.bundle.expiresAt}; allowed during the grace period`;
      detail = lastError && lastError !== 'expired' ? `${note} (also: ${detail ?? lastError})` : note;
      lastError = 'expired';
    }
    const next: ClientStatus = {
      health: h,
      version: this.held?.bundle.version ?? null,
      revision: this.held?.bundle.revision ?? null,
      lastError,
      detail,
      highestVersionSeen: this.highestVersionSeen,
    };
    const prev = this.state;
    this.state = next;
    if (prev.health !== next.health || prev.version !== next.version || prev.revision !== next.revision || prev.lastError !== next.lastError) {
      this.emit('health', { ...next });
      if (this.loop) void this.report();
    }
  }

  /** Sends the status to the server; best effort, one request at a time, the newest state wins. */
  private report(): Promise<void> {
    if (this.reporting) {
      this.reportAgain = true;
      return this.reporting;
    }
    this.reporting = (async () => {
      do {
        this.reportAgain = false;
        const s = this.state;
        const body: RuntimeStatus = { runtimeId: this.runtimeId, version: s.version, health: s.health };
        if (s.revision) body.revision = s.revision;
        if (s.lastError) body.lastError = s.lastError;
        if (s.detail) body.detail = s.detail.slice(0, 500);
        try {
          const res = await this.fetchFn(`${this.base}/v1/tenants/${encodeURIComponent(this.options.tenant)}/runtimes/status`, {
            method: 'POST',
            headers: { authorization: `Bearer ${this.options.token}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
            signal: AbortSignal.timeout(REPORT_TIMEOUT_MS),
          });
          await res.arrayBuffer();
        } catch {
          // The next change or heartbeat reports again.
        }
      } while (this.reportAgain);
      this.reporting = undefined;
    })();
    return this.reporting;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
  }

  private emit<E extends keyof Events>(event: E, ...args: Events[E]): void {
    try {
      this.events.emit(event, ...args);
    } catch {
      // A listener's failure must not stop the client.
    }
  }
}

/** The kid a detached JWS names (already verified when the bundle was accepted). */
function signerKid(signature: string): string | undefined {
  try {
    const kid = (JSON.parse(Buffer.from(signature.split('.')[0], 'base64url').toString('utf8')) as { kid?: unknown }).kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

/** The record of a call denied because no good bundle was held (bundleVersion null). */
function unbundledRecord(request: EvaluationRequest, tool: string, d: CallDecision, logFacts: boolean): DecisionRecord {
  const r: DecisionRecord = {
    at: new Date().toISOString(),
    toolCallId: d.toolCallId,
    subject: request.subject,
    groups: request.groups ?? ['default'],
    state: request.state ?? 'undefined',
    tool,
    decision: d.decision,
    errorCode: d.errorCode,
    reason: 'no_bundle',
    bundleVersion: null,
  };
  if (request.profile !== undefined) r.profile = request.profile;
  if (logFacts && request.facts && Object.keys(request.facts).length > 0) r.facts = request.facts;
  return r;
}

function unquote(etag: string | null): string | undefined {
  if (!etag) return undefined;
  const m = /^(?:W\/)?"([^"]*)"$/.exec(etag.trim());
  return m ? m[1] : undefined;
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}

function defaultRuntimeId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '') || 'runtime';
  return `${host}-${process.pid}`.slice(0, 128);
}
