import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/support/harness.ts';
import { publishBundle } from '../compiler/publish.ts';
import { nextTurn } from '../http/event-loop.ts';
import { insertBundle, latestBundleHead, latestBundleRow } from '../store/bundles.ts';
import { BundleCache, compressBundle, servedBundle } from './bundle-cache.ts';
import { PublishEvents } from './publish-events.ts';

const TENANT = 'acme-research';
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('the bundle cache beside a publish of this process', () => {
  it('keeps the bundle a publish handed over when a re-read that began before that publish ends after it', async () => {
    const db = t.deps.database.db;
    if (!(await latestBundleHead(db, TENANT))) await publishBundle(t.deps, { actor: 'system', requestId: null, reason: 'cache test' }, TENANT, {}, t.deps.keys);
    const stored = (await latestBundleHead(db, TENANT))!;
    const events = new PublishEvents();
    const cache = new BundleCache(db, events, 60_000);
    try {
      expect((await cache.latest(TENANT))?.version).toBe(stored.version);
      const next = servedBundle(
        { tenant: TENANT, version: stored.version + 1, revision: 'sha256:handed-over', signature: 'sig' },
        await compressBundle(Buffer.from('{"handed":"over"}')),
      );
      // A notice from elsewhere starts a re-read of the database (which still holds `stored`) ...
      events.published(TENANT, stored.version + 5);
      // ... and, before that read answers, this process's publish hands over its newer bundle, as
      // committed (its row written here after the event, so the first read cannot see it).
      events.published(TENANT, next.version, next);
      const row = (await latestBundleRow(db, TENANT))!;
      await insertBundle(db, { ...row, version: next.version, revision: next.revision });
      expect(cache.fresh(TENANT)).toBe(next);
      // Every re-read under way ends (better-sqlite3 answers within a few turns).
      for (let i = 0; i < 10; i++) await nextTurn();
      expect(cache.fresh(TENANT)?.version).toBe(next.version);
      expect(cache.fresh(TENANT)).toBe(next);
    } finally {
      cache.close();
    }
  });
});
