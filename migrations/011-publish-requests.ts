import type { Kysely } from 'kysely';

// Publishes under review: one row per request, with the compiled content that was reviewed (so an
// approval ships exactly it) and the diff, impact and test results the reviewer saw. Rows go with
// their tenant.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('publish_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('revision', 'text', (c) => c.notNull())
    .addColumn('rollback_to', 'integer')
    .addColumn('based_on', 'integer')
    .addColumn('content', 'text')
    .addColumn('review', 'text', (c) => c.notNull())
    .addColumn('forced', 'text')
    .addColumn('requested_by', 'text', (c) => c.notNull())
    .addColumn('requested_by_email', 'text')
    .addColumn('requested_by_label', 'text')
    .addColumn('requested_at', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('decided_by', 'text')
    .addColumn('decided_by_email', 'text')
    .addColumn('decided_by_label', 'text')
    .addColumn('decided_at', 'text')
    .addColumn('decision_reason', 'text')
    .addColumn('published_version', 'integer')
    .execute();
  await db.schema.createIndex('publish_requests_by_tenant').on('publish_requests').columns(['tenant', 'requested_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('publish_requests').execute();
}
