import type { Kysely } from 'kysely';

// A runtime's report carries a human-readable note on its last error beside the code.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runtimes').addColumn('detail', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runtimes').dropColumn('detail').execute();
}
