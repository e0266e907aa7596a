import type { Kysely } from 'kysely';

// A token may carry an expiry (ISO 8601 UTC); after it the token and its console sessions stop working.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tokens').addColumn('expires_at', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tokens').dropColumn('expires_at').execute();
}
