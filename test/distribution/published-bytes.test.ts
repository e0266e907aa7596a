import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../server/db/database.ts';
import type { ServedBundle } from '../../server/distribution/bundle-cache.ts';
import type { PublishedEvent } from '../../server/distribution/publish-events.ts';
import { StaticMirror, startStaticMirror } from '../../server/distribution/static-mirror.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// A publish signs its bundle and stores it; the process that published hands the signed bytes
// (already compressed) to its bundle cache and static mirror, which used to read them back from
// the database on the publish event.

const TENANT = 'acme-research';
let t: TestApp;
let mirrorDir: string;
beforeAll(async () => {
  t = await startTestApp();
  mirrorDir = mkdtempSync(join(tmpdir(), 'toolgate-published-bytes-'));
});
afterAll(async () => {
  await t.close();
  rmSync(mirrorDir, { recursive: true, force: true });
});

/** The database as the mirror sees it, noting every table it reads. */
function watchedDb(db: Db, read: string[]): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'selectFrom') return (table: string) => (read.push(table), target.selectFrom(table as 'bundles'));
      return Reflect.get(target, prop, receiver);
    },
  });
}

describe('the signed bytes of a publish', () => {
  it('reach the bundle cache and the static mirror as signed, with nothing read back from the database', async () => {
    const keys = t.deps.keys;
    const read: string[] = [];
    const stop = startStaticMirror(
      new StaticMirror(mirrorDir, watchedDb(t.deps.database.db, read), keys),
      keys,
      pino({ level: 'silent' }),
      t.deps.publishEvents,
    );
    const events: PublishedEvent[] = [];
    const onPublished = (e: PublishedEvent) => events.push(e);
    t.deps.publishEvents.on('published', onPublished);
    try {
      // A first version and a pull of it, so this process's cache follows the tenant.
      expect((await t.request('POST', `/v1/tenants/${TENANT}/bundles`, { body: { reason: 'a first version' } })).status).toBe(201);
      expect((await t.request('GET', `/v1/tenants/${TENANT}/bundles/latest`)).status).toBe(200);
      const cur = await t.request('GET', '/v1/tools/core__knowledge-query');
      const patched = await t.request('PATCH', '/v1/tools/core__knowledge-query', {
        body: { description: 'Queries the knowledge base, now described anew' },
        headers: { 'if-match': cur.headers.get('etag')! },
      });
      expect(patched.status).toBe(200);
      read.length = 0;

      const r = await t.request('POST', `/v1/tenants/${TENANT}/bundles`, { body: { reason: 'bytes straight through' } });
      expect(r.status).toBe(201);
      const served = events.find((e) => e.version === r.json.version)?.served as ServedBundle;
      expect(served).toBeDefined();
      expect(served.revision).toBe(r.json.revision);
      // The cache serves the very object the publish made: no copy read from the database.
      expect(t.deps.bundles.fresh(TENANT)).toBe(served);
      const pulled = await t.request('GET', `/v1/tenants/${TENANT}/bundles/latest`, { headers: { 'accept-encoding': 'identity' } });
      expect(pulled.text).toBe(Buffer.from(served.body).toString('utf8'));
      expect(pulled.headers.get('toolgate-signature')).toBe(served.signature);

      const latest = join(mirrorDir, TENANT, 'latest.json');
      for (let i = 0; i < 200 && !(existsSync(latest) && JSON.parse(readFileSync(latest, 'utf8')).version === r.json.version); i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(readFileSync(latest, 'utf8')).toBe(pulled.text);
      expect(readFileSync(join(mirrorDir, TENANT, 'latest.json.jws'), 'utf8')).toBe(served.signature);
      expect(readFileSync(join(mirrorDir, TENANT, `${r.json.version}.json`), 'utf8')).toBe(pulled.text);
      expect(read).not.toContain('bundles');
    } finally {
      t.deps.publishEvents.off('published', onPublished);
      stop();
    }
  });

  it('a publish announced without its bytes (another replica) is still read from the database', async () => {
    const keys = t.deps.keys;
    const read: string[] = [];
    const dir = join(mirrorDir, 'other-replica');
    const stop = startStaticMirror(new StaticMirror(dir, watchedDb(t.deps.database.db, read), keys), keys, pino({ level: 'silent' }), t.deps.publishEvents);
    try {
      const latest = (await t.request('GET', `/v1/tenants/${TENANT}/bundles`)).json.items[0].version as number;
      t.deps.publishEvents.published(TENANT, latest);
      const file = join(dir, TENANT, 'latest.json');
      for (let i = 0; i < 200 && !existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(JSON.parse(readFileSync(file, 'utf8')).version).toBe(latest);
      expect(read).toContain('bundles');
    } finally {
      stop();
    }
  });
});
