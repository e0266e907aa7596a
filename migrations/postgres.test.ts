import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTempPostgres } from '../test/support/postgres.ts';
import type { DecisionRecord } from '../policy-schemas/types.gen.ts';
import { loadBundle } from '../runtime/load-bundle.ts';
import { expireDecisions, listDecisions, storeBatch, summarizeDecisions } from '../server/decisions/decision-store.ts';
import { analyzeImpact } from '../server/decisions/impact.ts';
import { makeBundle } from '../test/distribution/signed-bundles.ts';
import { migrations } from './index.ts';
import { MIGRATED_TABLES } from '../test/support/migrated-tables.ts';

// The embedded default is SQLite; these are the same migrations on a real PostgreSQL server, the
// path for installations that outgrow one machine.
let pgServer: Awaited<ReturnType<typeof startTempPostgres>>;
let db: Kysely<any>;

beforeAll(async () => {
  pgServer = await startTempPostgres();
  db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: pgServer.url, max: 2 }) }) });
});
afterAll(async () => {
  await db?.destroy();
  pgServer?.stop();
});

const migrator = () => new Migrator({ db, provider: { getMigrations: async () => migrations } });
const tables = async () =>
  (
    await sql<{ tablename: string }>`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'kysely_%' ORDER BY tablename`.execute(
      db,
    )
  ).rows.map((r) => r.tablename);

describe('migrations on PostgreSQL', () => {
  it('migrate an empty database all the way up', async () => {
    const { error, results } = await migrator().migrateToLatest();
    expect(error).toBeUndefined();
    expect(results?.map((r) => r.migrationName)).toEqual(Object.keys(migrations));
    expect(await tables()).toEqual(MIGRATED_TABLES);
  });

  it('keep the audit log and its checkpoints append-only there too', async () => {
    await db
      .insertInto('audit_events')
      .values({ seq: 1, at: 'now', actor: 'system', action: 'create', entity_type: 'group', entity_id: 'g', prev_hash: '0', hash: '1' })
      .execute();
    await expect(sql`UPDATE audit_events SET reason = 'forged'`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM audit_events`.execute(db)).rejects.toThrow(/append-only/);
    await db.insertInto('audit_checkpoints').values({ seq: 1, hash: '1', at: 'now', kid: 'k', signature: 's' }).execute();
    await expect(sql`UPDATE audit_checkpoints SET hash = 'forged'`.execute(db)).rejects.toThrow(/audit_checkpoints is append-only/);
    await expect(sql`DELETE FROM audit_checkpoints`.execute(db)).rejects.toThrow(/audit_checkpoints is append-only/);
  });

  it('cascade a tenant delete to its policy, grants and tests', async () => {
    await db.insertInto('tenants').values({ id: 't', name: 'T', version: 1, created_at: 'x', updated_at: 'x' }).execute();
    await db.insertInto('tenant_policies').values({ tenant: 't', body: '{}', version: 1, updated_at: 'x' }).execute();
    await db.insertInto('grants').values({ tenant: 't', connection_id: 'c', body: '{}', version: 1, created_at: 'x', updated_at: 'x' }).execute();
    await db.insertInto('tenant_tests').values({ tenant: 't', body: '{"tests":[]}', version: 1, created_at: 'x', updated_at: 'x' }).execute();
    await db.deleteFrom('tenants').where('id', '=', 't').execute();
    expect(await db.selectFrom('grants').selectAll().execute()).toEqual([]);
    expect(await db.selectFrom('tenant_tests').selectAll().execute()).toEqual([]);
  });

  it('store, cap, page, summarize, replay and expire decision records there too', async () => {
    await db.insertInto('tenants').values({ id: 'd', name: 'D', version: 1, created_at: 'x', updated_at: 'x' }).execute();
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
    const record = (i: number, over: Partial<DecisionRecord> = {}): DecisionRecord => ({
      at: at(10 - i),
      toolCallId: `c${i}`,
      subject: 'agent:support-bot',
      groups: ['default'],
      state: 'undefined',
      tool: 'core__tool-0001',
      decision: 'allow',
      bundleVersion: 1,
      ...over,
    });
    const batch = {
      runtimeId: 'w',
      dropped: 4,
      records: [record(0), record(1, { tool: 'core__tool-0000', decision: 'deny', errorCode: 'policy_denied', reason: 'denied' }), record(2), record(3)],
    };
    const r = await db.transaction().execute((tx) => storeBatch(tx as never, 'd', batch, at(0), 3));
    expect(r).toEqual({ stored: 4, evicted: 1 });
    const listed = await listDecisions(db, 'd', {}, null, 2);
    expect(listed.map((x) => x.toolCallId)).toEqual(['c3', 'c2']);
    expect((await listDecisions(db, 'd', {}, { at: listed[1].at, id: listed[1].id }, 2)).map((x) => x.toolCallId)).toEqual(['c1']);
    const summary = await summarizeDecisions(db, 'd', {}, new Date());
    expect(summary.topDeniedTools).toEqual([{ key: 'core__tool-0000', calls: 1, reasons: [{ reason: 'denied', calls: 1 }] }]);
    expect(summary.counters).toEqual({ stored: 3, evicted: 1, expired: 0 });
    expect(summary.runtimes).toEqual([expect.objectContaining({ runtimeId: 'w', received: 4, dropped: 4 })]);
    const loaded = loadBundle(makeBundle({ tenant: 'd', version: 1 }));
    const impact = await analyzeImpact(db, 'd', loaded, { from: at(60), to: at(-1), examples: 1 });
    // Under this bundle the analyst is denied tool-0000 and allowed tool-0001: nothing changes.
    expect(impact).toMatchObject({ requests: 1, calls: 3, replayed: 3, totals: { allowToDeny: 0, denyToAllow: 0, toApproval: 0, fromApproval: 0 } });
    const expired = await expireDecisions((fn) => db.transaction().execute(fn as never), db, at(8.5));
    expect(expired).toBe(1);
    expect((await summarizeDecisions(db, 'd', {}, new Date())).counters).toEqual({ stored: 2, evicted: 1, expired: 1 });
    await db.deleteFrom('tenants').where('id', '=', 'd').execute();
    expect(await db.selectFrom('decisions').selectAll().execute()).toEqual([]);
  });

  it('migrate all the way down again', async () => {
    for (;;) {
      const { error, results } = await migrator().migrateDown();
      expect(error).toBeUndefined();
      if (!results?.length) break;
    }
    expect(await tables()).toEqual([]);
  });
});
