import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTempPostgres } from '../test/support/postgres.ts';
import { migrations } from './index.ts';

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
  (await sql<{ tablename: string }>`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'kysely_%' ORDER BY tablename`.execute(db)).rows.map((r) => r.tablename);

describe('migrations on PostgreSQL', () => {
  it('migrate an empty database all the way up', async () => {
    const { error, results } = await migrator().migrateToLatest();
    expect(error).toBeUndefined();
    expect(results?.map((r) => r.migrationName)).toEqual(Object.keys(migrations));
    expect(await tables()).toEqual(['audit_events', 'bundles', 'grants', 'groups', 'mcp_servers', 'runtimes', 'sessions', 'states', 'tenant_policies', 'tenant_tests', 'tenants', 'tokens', 'tools']);
  });

  it('keep the audit log append-only there too', async () => {
    await db
      .insertInto('audit_events')
      .values({ seq: 1, at: 'now', actor: 'system', action: 'create', entity_type: 'group', entity_id: 'g', prev_hash: '0', hash: '1' })
      .execute();
    await expect(sql`UPDATE audit_events SET reason = 'forged'`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM audit_events`.execute(db)).rejects.toThrow(/append-only/);
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

  it('migrate all the way down again', async () => {
    for (;;) {
      const { error, results } = await migrator().migrateDown();
      expect(error).toBeUndefined();
      if (!results?.length) break;
    }
    expect(await tables()).toEqual([]);
  });
});
