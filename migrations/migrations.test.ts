import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ToolgateDatabase } from '../server/db/database.ts';
import { migrations } from './index.ts';

const tables = async (d: ToolgateDatabase) =>
  (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%' ORDER BY name`.execute(d.db)).rows.map((r) => r.name);

describe('migrations', () => {
  it('migrate an empty database all the way up and back down', async () => {
    const d = new ToolgateDatabase(':memory:');
    const up = await d.migrateToLatest();
    expect(up).toEqual(Object.keys(migrations));
    expect(await tables(d)).toEqual(expect.arrayContaining(['audit_events', 'bundles', 'grants', 'groups', 'runtimes', 'sessions', 'states', 'tenant_policies', 'tenants', 'tokens', 'tools', 'mcp_servers']));
    const down = await d.migrateDown();
    expect(down).toEqual(Object.keys(migrations).reverse());
    expect(await tables(d)).toEqual([]);
    expect(await d.migrateToLatest()).toEqual(Object.keys(migrations));
    await d.close();
  });

  it('opens SQLite in WAL mode with foreign keys on and synchronous FULL', async () => {
    const d = new ToolgateDatabase(':memory:');
    expect(d.sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(d.sqlite.pragma('synchronous', { simple: true })).toBe(2);
    await d.close();
  });
});
