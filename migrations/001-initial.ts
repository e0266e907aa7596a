import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Entities are stored as a JSON document (`body`) plus the columns queries filter on. Text and
// integer columns only, so the same migration runs on SQLite and PostgreSQL.

export async function up(db: Kysely<unknown>): Promise<void> {
  const entity = (name: string, key: string) =>
    db.schema
      .createTable(name)
      .addColumn(key, 'text', (c) => c.primaryKey())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull());

  await entity('tools', 'id')
    .addColumn('status', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tools_status').on('tools').column('status').execute();
  await entity('groups', 'name').execute();
  await entity('states', 'name').execute();
  await entity('mcp_servers', 'id').execute();

  await db.schema
    .createTable('tenants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('tenant_policies')
    .addColumn('tenant', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('grants')
    .addColumn('tenant', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('grants_pk', ['tenant', 'connection_id'])
    .execute();

  await db.schema
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('tenants', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('token_id', 'text', (c) => c.notNull().references('tokens.id').onDelete('cascade'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('audit_events')
    .addColumn('seq', 'integer', (c) => c.primaryKey())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('entity_type', 'text', (c) => c.notNull())
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('tenant', 'text')
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .addColumn('reason', 'text')
    .addColumn('request_id', 'text')
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_events_tenant').on('audit_events').columns(['tenant', 'seq']).execute();
  await db.schema.createIndex('audit_events_entity').on('audit_events').columns(['entity_type', 'entity_id', 'seq']).execute();
  await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['actor', 'seq']).execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();

  // The audit log is append-only at the database level, whatever the application does.
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`CREATE FUNCTION audit_events_refuse() RETURNS trigger AS $$
      BEGIN RAISE EXCEPTION 'audit_events is append-only'; END; $$ LANGUAGE plpgsql`.execute(db);
    await sql`CREATE TRIGGER audit_events_no_update BEFORE UPDATE OR DELETE ON audit_events
      FOR EACH ROW EXECUTE FUNCTION audit_events_refuse()`.execute(db);
  } else {
    await sql`CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
      BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END`.execute(db);
    await sql`CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
      BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END`.execute(db);
  }

  await db.schema
    .createTable('bundles')
    .addColumn('tenant', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('revision', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('kid', 'text', (c) => c.notNull())
    .addColumn('published_by', 'text', (c) => c.notNull())
    .addColumn('published_at', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('rollback_of', 'integer')
    .addPrimaryKeyConstraint('bundles_pk', ['tenant', 'version'])
    .execute();

  await db.schema
    .createTable('runtimes')
    .addColumn('tenant', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('runtime_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer')
    .addColumn('revision', 'text')
    .addColumn('health', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('reported_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('runtimes_pk', ['tenant', 'runtime_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'runtimes',
    'bundles',
    'audit_events',
    'sessions',
    'tokens',
    'grants',
    'tenant_policies',
    'tenants',
    'mcp_servers',
    'states',
    'groups',
    'tools',
  ]) {
    await db.schema.dropTable(t).execute();
  }
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`DROP FUNCTION IF EXISTS audit_events_refuse()`.execute(db);
  }
}
