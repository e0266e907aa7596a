import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../policy-schemas/types.gen.ts';
import type { AppConfig } from '../context.ts';
import { ToolgateDatabase } from '../db/database.ts';
import { listDecisions, storeBatch } from './decision-store.ts';
import { startDecisionRetention } from './retention.ts';

let d: ToolgateDatabase;
const day = 86400_000;
const now = Date.parse('2026-06-30T12:00:00Z');
const record = (daysAgo: number): DecisionRecord => ({
  at: new Date(now - daysAgo * day).toISOString(),
  toolCallId: `${daysAgo}d`,
  subject: 'agent:bot',
  groups: ['default'],
  state: 'undefined',
  tool: 'core__x',
  decision: 'allow',
  bundleVersion: 1,
});

beforeAll(async () => {
  d = new ToolgateDatabase(':memory:');
  await d.migrateToLatest();
  await d.db.insertInto('tenants').values({ id: 'acme', name: 'Acme', version: 1, created_at: 'x', updated_at: 'x' }).execute();
  await d.transaction((tx) =>
    storeBatch(tx, 'acme', { runtimeId: 'w', records: [record(40), record(11), record(9), record(1)] }, new Date(now).toISOString(), 1_000_000),
  );
});
afterAll(async () => d.close());

describe('decision retention job', () => {
  it('deletes, in the background, the records older than the configured number of days', async () => {
    const config = { decisions: { retentionDays: 10, maxPerTenant: 1_000_000 } } as AppConfig;
    const stop = startDecisionRetention(
      { database: d, logger: pino({ level: 'silent' }), config },
      { firstMs: 0, everyMs: 3_600_000, now: () => new Date(now) },
    );
    await expect.poll(async () => (await listDecisions(d.db, 'acme', {}, null, 10)).map((r) => r.toolCallId), { timeout: 5_000 }).toEqual(['1d', '9d']);
    await stop();
    const stats = await d.db.selectFrom('decision_stats').selectAll().executeTakeFirstOrThrow();
    expect(stats).toMatchObject({ stored: 2, expired: 2 });
  });
});
