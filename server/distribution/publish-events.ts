import { EventEmitter } from 'node:events';
import type { ServedBundle } from './bundle-cache.ts';

/**
 * In-process notice that a tenant has a new latest bundle, so long-polling pulls can answer at
 * once. Emitted only after the publishing transaction has committed. One per server, owned by its
 * application context (AppDeps.publishEvents): test servers in one process never hear each other.
 */
export class PublishEvents extends EventEmitter {
  constructor() {
    super();
    // Every waiting pull's cache and the mirror listen: no leak warning for many listeners.
    this.setMaxListeners(0);
  }

  /** `served`: the bundle as signed and compressed by the publish in this process, so no one reads it back from the database. */
  published(tenant: string, version: number, served?: ServedBundle): void {
    this.emit('published', served ? { tenant, version, served } : { tenant, version });
  }

  /** A tenant was deleted: what was cached for it must go (a new tenant may reuse the id). */
  tenantRemoved(tenant: string): void {
    this.emit('tenant-removed', tenant);
  }
}

export type PublishedEvent = { tenant: string; version: number; served?: ServedBundle };
