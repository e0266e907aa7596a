import { type Kysely, PostgresAdapter } from 'kysely';

// Decision logs: what runtimes decided, one row per call, plus per-runtime and per-tenant
// counters (records received, records a runtime dropped, records the server evicted).
// Text and integer columns only, so the migration runs on SQLite and PostgreSQL alike.

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  let decisions = db.schema.createTable('decisions');
  decisions = postgres
    ? decisions.addColumn('id', 'bigserial', (c) => c.primaryKey())
    : decisions.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  await decisions
    .addColumn('tenant', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('runtime_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addColumn('tool_call_id', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('decision', 'text', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('reason', 'text')
    .addColumn('bundle_version', 'integer')
    .addColumn('revision', 'text')
    // The evaluation request behind the call, as canonical JSON, and its hash: impact analysis
    // replays each distinct request once.
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .execute();
  // Lists go newest first by decision time; the cap and retention remove the oldest by it too.
  await db.schema.createIndex('decisions_tenant_at').on('decisions').columns(['tenant', 'at', 'id']).execute();
  await db.schema.createIndex('decisions_tenant_subject').on('decisions').columns(['tenant', 'subject', 'at']).execute();
  await db.schema.createIndex('decisions_tenant_tool').on('decisions').columns(['tenant', 'tool', 'at']).execute();

  await db.schema
    .createTable('decision_sources')
    .addColumn('tenant', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('runtime_id', 'text', (c) => c.notNull())
    .addColumn('received', 'integer', (c) => c.notNull())
    .addColumn('dropped', 'integer', (c) => c.notNull())
    .addColumn('last_batch_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('decision_sources_pk', ['tenant', 'runtime_id'])
    .execute();

  await db.schema
    .createTable('decision_stats')
    .addColumn('tenant', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('stored', 'integer', (c) => c.notNull())
    .addColumn('evicted', 'integer', (c) => c.notNull())
    .addColumn('expired', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['decision_stats', 'decision_sources', 'decisions']) await db.schema.dropTable(t).execute();
}
