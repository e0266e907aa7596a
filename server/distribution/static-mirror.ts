import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { KeyStore } from '../signing/key-store.ts';
import type { ServedBundle } from './bundle-cache.ts';
import type { PublishEvents, PublishedEvent } from './publish-events.ts';

/**
 * Writes a file that readers see whole or not at all: a temp file in the same directory (so the
 * rename never crosses file systems), then rename over the old one.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, data, { mode: 0o644 });
  renameSync(tmp, path);
}

// Tenant ids are validated at creation; this guards the file system against anything else.
const SAFE_TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * The static mirror: the exact bytes the server serves (bundle.json canonical bytes, the detached
 * JWS text) as plain files any static host or CDN can serve, beside `keyset.json(.jws)`.
 */
export class StaticMirror {
  constructor(
    private readonly dir: string,
    private readonly db: Db,
    private readonly keys: KeyStore,
  ) {}

  /** Writes `<tenant>/<version>.json(.jws)` and then `<tenant>/latest.json(.jws)` for the tenant's latest bundle. */
  async writeTenant(tenant: string, published?: ServedBundle): Promise<number | undefined> {
    if (!SAFE_TENANT.test(tenant)) throw new Error(`tenant id ${JSON.stringify(tenant)} cannot name a mirror directory`);
    // A bundle this process just published is written as it was signed, not read back.
    const row = published
      ? { version: published.version, content: published.body, signature: published.signature }
      : await this.db
          .selectFrom('bundles')
          .select(['version', 'content', 'signature'])
          .where('tenant', '=', tenant)
          .orderBy('version', 'desc')
          .limit(1)
          .executeTakeFirst();
    if (!row) return undefined;
    const dir = join(this.dir, tenant);
    mkdirSync(dir, { recursive: true });
    const body = typeof row.content === 'string' ? Buffer.from(row.content, 'utf8') : row.content;
    // Each signature before its document: a reader that sees a new document finds its signature.
    writeFileAtomic(join(dir, `${row.version}.json.jws`), row.signature);
    writeFileAtomic(join(dir, `${row.version}.json`), body);
    writeFileAtomic(join(dir, 'latest.json.jws'), row.signature);
    writeFileAtomic(join(dir, 'latest.json'), body);
    return row.version;
  }

  /** Writes `keyset.json(.jws)` from the latest signed key set. */
  async writeKeySet(): Promise<number> {
    const { bytes, signature, keySet } = await this.keys.keySet();
    mkdirSync(this.dir, { recursive: true });
    writeFileAtomic(join(this.dir, 'keyset.json.jws'), signature);
    writeFileAtomic(join(this.dir, 'keyset.json'), bytes);
    return keySet.version;
  }

  /** Writes the key set and every tenant's latest bundle. */
  async writeAll(): Promise<{ tenants: number; keySetVersion: number }> {
    const keySetVersion = await this.writeKeySet();
    const tenants = await this.db.selectFrom('bundles').select('tenant').distinct().orderBy('tenant').execute();
    for (const t of tenants) await this.writeTenant(t.tenant);
    return { tenants: tenants.length, keySetVersion };
  }
}

/**
 * Keeps a mirror directory following publishes and key-set changes, after each commit. A failed
 * write is logged and retried with the next publish; it never fails the publish.
 */
export function startStaticMirror(mirror: StaticMirror, keys: KeyStore, logger: Logger, publishEvents: PublishEvents): () => void {
  // Tenants to write, each with the bundle this process published (undefined: read the latest). One
  // entry per notice, so a notice heard while its tenant is written keeps it pending.
  const pending = new Map<string, { served: ServedBundle | undefined }>();
  let keySetPending = true;
  let chain: Promise<void> = Promise.resolve();
  const flush = () => {
    chain = chain.then(async () => {
      if (keySetPending) {
        try {
          await mirror.writeKeySet();
          keySetPending = false;
        } catch (err) {
          logger.error({ err }, 'static mirror: writing the key set failed; retried with the next publish');
        }
      }
      for (const [tenant, entry] of [...pending]) {
        try {
          await mirror.writeTenant(tenant, entry.served);
          // A publish that arrived meanwhile stays pending.
          if (pending.get(tenant) === entry) pending.delete(tenant);
        } catch (err) {
          logger.error({ err, tenant }, 'static mirror: writing the bundle failed; retried with the next publish');
        }
      }
    });
  };
  const onPublished = (e: PublishedEvent) => {
    const queued = pending.get(e.tenant);
    // The bundle handed over is written as it is only when nothing else is queued but an older one
    // of this process; after a notice from another replica the latest is read instead.
    const alone = queued === undefined || (queued.served !== undefined && queued.served.version < (e.served?.version ?? 0));
    pending.set(e.tenant, { served: alone ? e.served : undefined });
    flush();
  };
  const onKeySet = () => {
    keySetPending = true;
    flush();
  };
  publishEvents.on('published', onPublished);
  const offKeySet = keys.onKeySetChanged(onKeySet);
  flush();
  return () => {
    publishEvents.off('published', onPublished);
    offKeySet();
  };
}
