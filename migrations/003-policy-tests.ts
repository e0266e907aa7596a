import { type Kysely, sql } from 'kysely';

// Each tenant's policy tests are one versioned JSON document, like its policy. Existing tenants
// start with an empty list, so every tenant has exactly one row (deleted with the tenant).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tenant_tests')
    .addColumn('tenant', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`INSERT INTO tenant_tests (tenant, body, version, created_at, updated_at) SELECT id, ${'{"tests":[]}'}, 1, created_at, created_at FROM tenants`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('tenant_tests').execute();
}
