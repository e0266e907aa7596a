import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../policy-schemas/types.gen.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { makeBundle } from '../../test/distribution/signed-bundles.ts';
import { ToolgateDatabase } from '../db/database.ts';
import { storeBatch } from './decision-store.ts';
import { analyzeImpact } from './impact.ts';

let d: ToolgateDatabase;
const now = Date.now();
const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();

beforeAll(async () => {
  d = new ToolgateDatabase(':memory:');
  await d.migrateToLatest();
  await d.db.insertInto('tenants').values({ id: 'acme', name: 'Acme', version: 1, created_at: 'x', updated_at: 'x' }).execute();
  // Four distinct requests (by state), the oldest first: calls to tool-0000, which the analyst role
  // denies, logged as allowed (as an older bundle decided them).
  const records: DecisionRecord[] = ['s1', 's2', 's3', 's4'].flatMap((state, i) =>
    Array.from({ length: i + 1 }, (_, k) => ({
      at: at(40 - i * 10 - k),
      toolCallId: `${state}-${k}`,
      subject: 'agent:support-bot',
      groups: ['default'],
      state,
      tool: 'core__tool-0000',
      decision: 'allow' as const,
      bundleVersion: 1,
    })),
  );
  await d.transaction((tx) => storeBatch(tx, 'acme', { runtimeId: 'w', records }, at(0), 1_000_000));
});
afterAll(async () => d.close());

describe('analyzeImpact', () => {
  const loaded = () => loadBundle(makeBundle({ tenant: 'acme', version: 2 }));

  it('replays every distinct request of the window and counts each logged call', async () => {
    const r = await analyzeImpact(d.db, 'acme', loaded(), { from: at(60), to: at(-1), examples: 2 });
    expect(r).toMatchObject({ requests: 4, calls: 10, replayed: 10, truncated: false, totals: { allowToDeny: 10 } });
    expect(r.changes).toEqual([
      { subject: 'agent:support-bot', tool: 'core__tool-0000', from: 'allow', to: 'deny', reason: 'denied', calls: 10, examples: expect.any(Array) },
    ]);
    expect(r.changes[0].examples).toHaveLength(2);
  });

  it('keeps only the most recent distinct requests beyond the limit, and says so', async () => {
    const r = await analyzeImpact(d.db, 'acme', loaded(), { from: at(60), to: at(-1), examples: 0, maxRequests: 2 });
    // s4 (4 calls) and s3 (3 calls) are the two most recent requests.
    expect(r).toMatchObject({ requests: 2, calls: 7, truncated: true, totals: { allowToDeny: 7 } });
    expect(r.changes[0].examples).toEqual([]);
  });

  it('looks only inside the window', async () => {
    const r = await analyzeImpact(d.db, 'acme', loaded(), { from: at(25), to: at(-1), examples: 1 });
    expect(r).toMatchObject({ requests: 2, calls: 7 });
  });
});
