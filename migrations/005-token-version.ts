import type { Kysely } from 'kysely';

// Tokens carry a version like every other entity, so revoking one names the version it saw (If-Match).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('tokens')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tokens').dropColumn('version').execute();
}
