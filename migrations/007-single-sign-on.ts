import { type Kysely, sql } from 'kysely';

// Single sign-on: the claim→role mappings, the sign-ins under way (state, nonce and PKCE verifier
// kept server-side so a replayed or forged callback finds nothing), sessions that belong to a
// person instead of a token, and the person's email and name beside the actor in the audit trail.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sso_mappings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sso_logins')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();

  // A session now comes from a token or from a person: token_id becomes nullable, which neither
  // SQLite nor a portable ALTER can do in place, so the table is rebuilt with its rows.
  await db.schema
    .createTable('sessions_next')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('token_id', 'text', (c) => c.references('tokens.id').onDelete('cascade'))
    .addColumn('user_sub', 'text')
    .addColumn('user_email', 'text')
    .addColumn('user_name', 'text')
    // The ID-token claims the mappings are judged on, and the access they gave when last judged.
    .addColumn('user_claims', 'text')
    .addColumn('user_access', 'text')
    .addColumn('access_checked_at', 'text')
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await sql`INSERT INTO sessions_next (id_hash, token_id, csrf_token, created_at, expires_at)
    SELECT id_hash, token_id, csrf_token, created_at, expires_at FROM sessions`.execute(db);
  await db.schema.dropTable('sessions').execute();
  await db.schema.alterTable('sessions_next').renameTo('sessions').execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_sub').execute();

  await db.schema.alterTable('audit_events').addColumn('actor_email', 'text').execute();
  await db.schema.alterTable('audit_events').addColumn('actor_name', 'text').execute();
  await db.schema.createIndex('audit_events_actor_email').on('audit_events').columns(['actor_email', 'seq']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('audit_events_actor_email').execute();
  await db.schema.alterTable('audit_events').dropColumn('actor_name').execute();
  await db.schema.alterTable('audit_events').dropColumn('actor_email').execute();
  await db.schema.dropIndex('sessions_user').execute();
  // Sessions of people cannot exist without single sign-on: they end.
  await sql`DELETE FROM sessions WHERE token_id IS NULL`.execute(db);
  await db.schema
    .createTable('sessions_prev')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('token_id', 'text', (c) => c.notNull().references('tokens.id').onDelete('cascade'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await sql`INSERT INTO sessions_prev SELECT id_hash, token_id, csrf_token, created_at, expires_at FROM sessions`.execute(db);
  await db.schema.dropTable('sessions').execute();
  await db.schema.alterTable('sessions_prev').renameTo('sessions').execute();
  await db.schema.dropTable('sso_logins').execute();
  await db.schema.dropTable('sso_mappings').execute();
}
