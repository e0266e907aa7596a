import type { Kysely } from 'kysely';

// Signed heads of the audit chain. The signature, not the table, is what an auditor trusts: a
// checkpoint kept outside the database still shows whether the history it covers was rewritten.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_checkpoints')
    .addColumn('seq', 'integer', (c) => c.primaryKey())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('kid', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_checkpoints').execute();
}
