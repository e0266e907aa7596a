import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ToolgateDatabase } from '../server/db/database.ts';
import { migrations } from './index.ts';
import { MIGRATED_TABLES } from '../test/support/migrated-tables.ts';

const tables = async (d: ToolgateDatabase) =>
  (
    await sql<{
      name: string;
    }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%' ORDER BY name`.execute(d.db)
  ).rows.map((r) => r.name);

describe('migrations', () => {
  it('migrate an empty database all the way up and back down', async () => {
    const d = new ToolgateDatabase(':memory:');
    const up = await d.migrateToLatest();
    expect(up).toEqual(Object.keys(migrations));
    expect(await tables(d)).toEqual(expect.arrayContaining(MIGRATED_TABLES));
    const down = await d.migrateDown();
    expect(down).toEqual(Object.keys(migrations).reverse());
    expect(await tables(d)).toEqual([]);
    expect(await d.migrateToLatest()).toEqual(Object.keys(migrations));
    await d.close();
  });

  it('give tenants that existed before policy tests an empty, versioned list', async () => {
    const d = new ToolgateDatabase(':memory:');
    const { Migrator } = await import('kysely');
    const migrator = new Migrator({ db: d.db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('002-runtime-detail')).error).toBeUndefined();
    await sql`INSERT INTO tenants (id, name, version, created_at, updated_at) VALUES ('old', 'Old', 3, '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z')`.execute(
      d.db,
    );
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    expect(await d.db.selectFrom('tenant_tests').selectAll().execute()).toEqual([
      { tenant: 'old', body: '{"tests":[]}', version: 1, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' },
    ]);
    await d.close();
  });

  it('keep the audit log and its checkpoints append-only', async () => {
    const d = new ToolgateDatabase(':memory:');
    await d.migrateToLatest();
    await d.db
      .insertInto('audit_events')
      .values({ seq: 1, at: 'now', actor: 'system', action: 'create', entity_type: 'group', entity_id: 'g', prev_hash: '0', hash: '1' })
      .execute();
    await d.db.insertInto('audit_checkpoints').values({ seq: 1, hash: '1', at: 'now', kid: 'k', signature: 's' }).execute();
    await expect(sql`UPDATE audit_events SET reason = 'forged'`.execute(d.db)).rejects.toThrow(/audit_events is append-only/);
    await expect(sql`DELETE FROM audit_events`.execute(d.db)).rejects.toThrow(/audit_events is append-only/);
    await expect(sql`UPDATE audit_checkpoints SET hash = 'forged'`.execute(d.db)).rejects.toThrow(/audit_checkpoints is append-only/);
    await expect(sql`DELETE FROM audit_checkpoints`.execute(d.db)).rejects.toThrow(/audit_checkpoints is append-only/);
    await d.close();
  });

  it('opens SQLite in WAL mode with foreign keys on and synchronous FULL', async () => {
    const d = new ToolgateDatabase(':memory:');
    expect(d.sqlite?.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(d.sqlite?.pragma('synchronous', { simple: true })).toBe(2);
    await d.close();
  });
});
