import type { Kysely } from 'kysely';

// A counter per document table (tools, groups, states, MCP servers, sign-on mappings), raised in
// the same transaction as every insert, update or delete of a row of that table. Caches of a parsed
// table compare it: count, newest stamp, versions and bytes can all come out the same after a
// document is deleted and made again (version 1 again, a body of the same length, a stamp no newer
// than the newest when a replica's clock is behind), and the counter cannot.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('table_generations')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('generation', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('table_generations').execute();
}
