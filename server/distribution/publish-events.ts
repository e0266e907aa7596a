import { EventEmitter } from 'node:events';

/**
 * In-process notice that a tenant has a new latest bundle, so long-polling pulls can answer at
 * once. Emitted only after the publishing transaction has committed.
 */
class PublishEvents extends EventEmitter {
  published(tenant: string, version: number): void {
    this.emit('published', { tenant, version });
  }

  /** A tenant was deleted: what was cached for it must go (a new tenant may reuse the id). */
  tenantRemoved(tenant: string): void {
    this.emit('tenant-removed', tenant);
  }
}

export type PublishedEvent = { tenant: string; version: number };

export const publishEvents = new PublishEvents();
publishEvents.setMaxListeners(0);
