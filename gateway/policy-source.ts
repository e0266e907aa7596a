import { EventEmitter } from 'node:events';
import type { BundleClient, ClientStatus, CurrentBundle } from '../runtime/client/bundle-client.ts';

/** The bundle the gateway enforces now, or why there is none. */
export type PolicyNow = { ok: true; current: CurrentBundle } | { ok: false; reason: 'no_bundle' | 'bundle_expired'; message: string };

/**
 * The gateway's view of the tenant's bundle: the SDK client's last good bundle, except that a
 * bundle past its `expiresAt` is no bundle at all (DESIGN's expiry rule: nothing is allowed by it).
 * Emits `change` on a new bundle and at the instant the one in use expires.
 */
export class PolicySource extends EventEmitter<{ change: [] }> {
  private expiryTimer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    private readonly client: Pick<BundleClient, 'current' | 'status' | 'on'>,
    private readonly now: () => number = Date.now,
  ) {
    super();
    this.unsubscribe.push(client.on('update', () => this.changed()));
    this.armExpiry();
  }

  current(): PolicyNow {
    const current = this.client.current();
    if (!current) return { ok: false, reason: 'no_bundle', message: 'no trusted policy bundle is loaded; every call is refused' };
    if (Date.parse(current.bundle.expiresAt) <= this.now()) return { ok: false, reason: 'bundle_expired', message: 'policy bundle expired' };
    return { ok: true, current };
  }

  status(): ClientStatus & { expiresAt: string | null; enforcing: boolean } {
    const held = this.client.current();
    return { ...this.client.status(), expiresAt: held?.bundle.expiresAt ?? null, enforcing: this.current().ok };
  }

  close(): void {
    clearTimeout(this.expiryTimer);
    for (const f of this.unsubscribe) f();
  }

  private changed(): void {
    this.armExpiry();
    this.emit('change');
  }

  private armExpiry(): void {
    clearTimeout(this.expiryTimer);
    const held = this.client.current();
    if (!held) return;
    const left = Date.parse(held.bundle.expiresAt) - this.now();
    if (left <= 0) return;
    this.expiryTimer = setTimeout(() => this.emit('change'), Math.min(left + 5, 2 ** 31 - 1));
    this.expiryTimer.unref();
  }
}
