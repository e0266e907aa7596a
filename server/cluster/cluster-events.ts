import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { validate } from '../../policy-schemas/index.ts';
import type { ClusterEvent as ClusterNotice } from '../../policy-schemas/types.gen.ts';
import type { ApprovalEvents } from '../approvals/approval-events.ts';
import type { TokenCache } from '../auth/token-cache.ts';
import type { ServedBundle } from '../distribution/bundle-cache.ts';
import type { PublishEvents } from '../distribution/publish-events.ts';
import type { KeyStore } from '../signing/key-store.ts';
import { type Leadership, SoleLeader } from './leadership.ts';
import type { NotifyChannel } from './notify-channel.ts';

/** Something that happened in one replica and matters to every replica's in-memory state. */
export type ClusterEvent = ClusterNotice['event'];

/** The PostgreSQL channel replicas of one database talk on. */
export const CLUSTER_CHANNEL = 'toolgate_cluster';
// Audit appends come by the thousand; others learn the newest seq at most this often.
const AUDIT_NOTICE_EVERY_MS = 100;

/**
 * What the events keep current in this process: parts of the server's application context. A
 * process without a server (a CLI command) has none of them, and nobody here hears its events.
 */
export type ClusterTargets = {
  publishEvents?: PublishEvents;
  tokens?: TokenCache;
  approvalEvents?: ApprovalEvents;
};

/** How a process reaches the other replicas: set by startCluster (none: this process is alone). */
export type ClusterLink = {
  leadership: Leadership;
  channel: NotifyChannel | null;
  /** Told of each notice from another replica that was applied (counted in the metrics). */
  onApplied?: (type: ClusterEvent['type']) => void;
};

/**
 * What crosses replicas without being a write. Every event takes effect in this process at once
 * (in the same turn, exactly as one SQLite process always did: publishEvents, the token cache,
 * the checkpoint rule) and, with a PostgreSQL channel, is sent to every other replica, which
 * applies it the same way on arrival. Events are announced after the change they describe
 * committed, so a replica that hears one reads the change.
 */
export class ClusterEvents {
  /** This process's id on the channel: it ignores its own notices, already applied when announced. */
  readonly replica = randomUUID();
  private keys: KeyStore | null = null;
  private auditSeq = 0;
  private auditTimer: NodeJS.Timeout | undefined;
  private offKeySet: (() => void) | undefined;
  private link: ClusterLink = { leadership: new SoleLeader(), channel: null };
  private readonly auditListeners = new Set<(seq: number) => void>();

  /** Made with the server (alone, leading) and joined to the other replicas by startCluster. */
  constructor(
    private readonly targets: ClusterTargets = {},
    private readonly logger?: Logger,
  ) {}

  /**
   * Joins the other replicas (startCluster; its close() cuts the channel again): the same instance
   * the server's context holds from its start, so what was handed it meanwhile (handlers,
   * schedulers) needs no replacing.
   */
  connect(link: ClusterLink): void {
    this.link = link;
  }

  /** Whether this process runs the jobs that run once across replicas (alone, it always does). */
  get leadership(): Leadership {
    return this.link.leadership;
  }

  private get channel(): NotifyChannel | null {
    return this.link.channel;
  }

  /**
   * Calls `listener` with the newest audit seq after audit events were appended, here or in another
   * replica (the leader's 1,000-event checkpoint rule needs no polling); returns the function that stops it.
   */
  onAuditAppended(listener: (seq: number) => void): () => void {
    this.auditListeners.add(listener);
    return () => this.auditListeners.delete(listener);
  }

  /** True when other processes hear these events (PostgreSQL); false for a process on its own. */
  get shared(): boolean {
    return this.channel !== null;
  }

  /** Follows the key store: a key set this process signs is announced; one announced elsewhere is re-read here. */
  followKeys(keys: KeyStore): void {
    this.keys = keys;
    this.offKeySet?.();
    this.offKeySet = keys.onKeySetChanged((origin) => {
      if (origin === 'this-process') this.send({ type: 'keyset-changed' });
    });
  }

  /** Applies `event` here and tells the other replicas. */
  announce(event: ClusterEvent, served?: ServedBundle): void {
    this.apply(event, served);
    if (event.type === 'audit-appended') this.sendAuditSeq(event.seq);
    else this.send(event);
  }

  /** A notification from the channel: applied unless it is this process's own or malformed. */
  receive(payload: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      this.logger?.warn('cluster events: a notice that is not JSON was ignored');
      return;
    }
    const checked = validate<ClusterNotice>('cluster-event', parsed);
    if (!checked.ok) {
      this.logger?.warn({ errors: checked.errors }, 'cluster events: a malformed notice was ignored');
      return;
    }
    if (checked.value.replica === this.replica) return;
    this.apply(checked.value.event);
    this.link.onApplied?.(checked.value.event.type);
  }

  /**
   * After the channel was down: notices sent meanwhile never arrived, so what they would have
   * dropped is dropped now (cached tokens) or re-read (the key set). Bundles need nothing: the
   * bundle cache re-reads the latest version on its own within seconds.
   */
  resync(): void {
    this.targets.tokens?.clear();
    void this.keys?.reload().catch((err: Error) => this.logger?.error({ err: { message: err.message } }, 'cluster events: cannot re-read the keys'));
  }

  /** Sends what is still pending and stops following the key store. */
  async close(): Promise<void> {
    this.offKeySet?.();
    if (this.auditTimer) {
      clearTimeout(this.auditTimer);
      this.auditTimer = undefined;
      this.flushAuditSeq();
    }
  }

  /** `served`: a bundle this process published, handed to its cache and mirror as signed (other replicas read it). */
  private apply(event: ClusterEvent, served?: ServedBundle): void {
    switch (event.type) {
      case 'published':
        this.targets.publishEvents?.published(event.tenant, event.version, served);
        return;
      case 'tenant-removed':
        this.targets.publishEvents?.tenantRemoved(event.tenant);
        this.targets.tokens?.clear();
        return;
      case 'tokens-changed':
        this.targets.tokens?.clear();
        return;
      case 'keyset-changed':
        // The keys directory is shared: the new files are there, this process re-reads them.
        void this.keys?.reload().catch((err: Error) => this.logger?.error({ err: { message: err.message } }, 'cluster events: cannot re-read the keys'));
        return;
      case 'audit-appended':
        for (const listener of this.auditListeners) listener(event.seq);
        return;
      case 'approval-decided':
        this.targets.approvalEvents?.decided(event.tenant, event.id);
        return;
    }
  }

  private send(event: ClusterEvent): void {
    if (!this.channel) return;
    this.channel.notify(JSON.stringify({ replica: this.replica, event } satisfies ClusterNotice));
  }

  private sendAuditSeq(seq: number): void {
    if (!this.channel) return;
    this.auditSeq = Math.max(this.auditSeq, seq);
    if (this.auditTimer) return;
    this.auditTimer = setTimeout(() => {
      this.auditTimer = undefined;
      this.flushAuditSeq();
    }, AUDIT_NOTICE_EVERY_MS);
    this.auditTimer.unref();
  }

  private flushAuditSeq(): void {
    if (this.auditSeq > 0) this.send({ type: 'audit-appended', seq: this.auditSeq });
  }
}
